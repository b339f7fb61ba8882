"""The review app: FastAPI pages and JSON API over a run store (`dialectbias review serve`; extra `review`)."""

from dialectbias.review.app._app import create_app

__all__ = ["create_app"]
