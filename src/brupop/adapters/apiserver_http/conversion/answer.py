"""The answer to a ConversionReview, as the conversion worker writes it.

`answer_to` parses the review, checks it against `review_bounds`, converts it with
`brupop.domain.conversion.convert_review` and writes the answer as compact JSON; the answer is the
same document `convert_review` returns.
"""

from __future__ import annotations

import json
from typing import Any

from brupop.adapters.apiserver_http.conversion.review_bounds import parsed_review
from brupop.domain.conversion import convert_review


def answer_to(body: bytes) -> bytes:
    """The ConversionReview answering the one in `body` (BadReviewError if it is not JSON or is
    nested too deep, ReviewTooLargeError if its objects are not shadow-sized).

    The review's objects are freed before the answer is written, and the answer's objects as
    they are written, so the worker's peak stays near the size of one copy of the objects.
    """
    review = parsed_review(body)
    answer = convert_review(review)
    _free_objects(review)
    return _dump(answer)


def _free_objects(review: Any) -> None:
    request = review.get("request") if isinstance(review, dict) else None
    objects = request.get("objects") if isinstance(request, dict) else None
    if isinstance(objects, list):
        objects.clear()


def _dump(answer: dict[str, Any]) -> bytes:
    """`answer` as compact JSON, its converted objects written (and freed) one by one."""
    response = dict(answer["response"])
    objects: list[Any] = response.pop("convertedObjects", [])
    objects.reverse()
    written = []
    while objects:
        written.append(_compact(objects.pop()))
    envelope = _compact({key: value for key, value in answer.items() if key != "response"})
    head = _compact(response)
    converted = ",".join(written)
    text = f'{envelope[:-1]},"response":{head[:-1]},"convertedObjects":[{converted}]}}}}'
    return text.encode()


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
