"""A ClusterReader over a dict of paths: each answers a JSON object or an HTTP status; an
unknown path is a 404, as the API answers one. SubjectAccessReviews are answered by a rule;
a POST elsewhere (a ConversionReview through a proxy) by `posted`, a path's answer or rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brupop.cli.doctor.reading import JSON, ReadRefused

Answer = JSON | int | str


class FakeCluster:
    def __init__(
        self,
        answers: dict[str, Answer] | None = None,
        review: Callable[[JSON], bool] | int = lambda _: True,
    ) -> None:
        self.answers: dict[str, Answer] = dict(answers or {})
        self.review = review
        self.reviews: list[JSON] = []
        self.queries: dict[str, dict[str, str] | None] = {}
        self.posted: dict[str, Callable[[JSON], Answer]] = {}
        self.posts: list[tuple[str, JSON]] = []

    def _answer(self, path: str) -> Answer:
        answer = self.answers.get(path, 404)
        if isinstance(answer, int):
            raise ReadRefused(answer, f"{answer}: refused")
        return answer

    def get(self, path: str, query: dict[str, str] | None = None) -> JSON:
        self.queries[path] = query
        answer = self._answer(path)
        assert isinstance(answer, dict), path
        return answer

    def get_text(self, path: str) -> str:
        answer = self._answer(path)
        assert isinstance(answer, str), path
        return answer

    def post(self, path: str, body: JSON) -> JSON:
        self.posts.append((path, body))
        rule = self.posted.get(path)
        answer = rule(body) if rule is not None else self._answer(path)
        if isinstance(answer, int):
            raise ReadRefused(answer, f"{answer}: refused")
        assert isinstance(answer, dict), path
        return answer

    def review_access(self, body: JSON) -> JSON:
        if isinstance(self.review, int):
            raise ReadRefused(self.review, f"{self.review}: refused")
        self.reviews.append(body)
        return {"status": {"allowed": self.review(body)}}


def listing(*items: dict[str, Any]) -> JSON:
    return {"items": list(items)}
