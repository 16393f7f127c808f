"""LOGGING_FORMATTER and TRACING_FILTER_DIRECTIVE as pydantic field types, checked with the
controller's and the apiserver's other settings at start (the agent checks them by hand)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from brupop.entrypoints.logging.log_filter import check_directive
from brupop.entrypoints.logging.log_settings import check_formatter

LoggingFormatter = Annotated[str, AfterValidator(check_formatter)]
FilterDirective = Annotated[str, AfterValidator(check_directive)]
