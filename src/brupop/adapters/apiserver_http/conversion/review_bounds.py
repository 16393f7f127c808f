"""What a ConversionReview may hold before it is converted: objects the size and shape of a shadow.

kube-apiserver sends one shadow per review, about 1.5 KB and 8 levels deep (`managedFields`
included). A review of more objects than a fleet's batch, of an object larger than any shadow
brupop writes, or nested deeper than a shadow can be, is refused before any conversion work:
its cost is the attacker's wish, not the fleet's.
"""

from __future__ import annotations

import json
from typing import Any

MAX_OBJECTS = 1000
MAX_OBJECT_BYTES = 64 * 1024  # serialized, compact: about 40 times the largest shadow measured
# A review of one shadow at its largest, with the review around it: what kube-apiserver sends.
SMALL_REVIEW_BYTES = MAX_OBJECT_BYTES + 4 * 1024
# Levels below the review itself (review, request, objects add three): a shadow's deepest path,
# metadata.managedFields[].fieldsV1 with its `f:` keys, is about 8.
MAX_OBJECT_DEPTH = 32
MAX_REVIEW_DEPTH = MAX_OBJECT_DEPTH + 3


class BadReviewError(ValueError):
    """The body is not JSON, or not JSON a review can be (answered 400)."""


class ReviewTooLargeError(ValueError):
    """The review holds more, or larger, objects than shadows can be (answered 413)."""


def parsed_review(body: bytes) -> Any:
    """The review in `body`, checked against the bounds above before anything converts it."""
    try:
        review = json.loads(body)
    except RecursionError:  # the parser's own stack: far deeper than the bound
        raise BadReviewError(_too_deep()) from None
    except ValueError:
        raise BadReviewError("the body is not valid JSON") from None
    if _deeper_than(review, MAX_REVIEW_DEPTH):
        raise BadReviewError(_too_deep())
    objects = _objects(review)
    if len(objects) > MAX_OBJECTS:
        raise ReviewTooLargeError(
            f"the review holds {len(objects)} objects; at most {MAX_OBJECTS} are converted at once"
        )
    for index, obj in enumerate(objects):
        size = len(json.dumps(obj, separators=(",", ":")))
        if size > MAX_OBJECT_BYTES:
            raise ReviewTooLargeError(
                f"objects[{index}] is {size} bytes; a shadow is at most {MAX_OBJECT_BYTES}"
            )
    return review


def _too_deep() -> str:
    return f"the review is nested deeper than a shadow can be ({MAX_OBJECT_DEPTH} levels)"


def _objects(review: Any) -> list[Any]:
    request = review.get("request") if isinstance(review, dict) else None
    objects = request.get("objects") if isinstance(request, dict) else None
    return objects if isinstance(objects, list) else []


def _deeper_than(document: Any, limit: int) -> bool:
    """Whether `document` has containers more than `limit` levels deep (walked without
    recursion, so no depth can overflow a stack)."""
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
