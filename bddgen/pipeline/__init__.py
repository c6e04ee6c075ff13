"""The stage runner: one `Models` bundle and one function per stage (see docs/architecture.md)."""

from bddgen.pipeline.models import ModelBuilders, Models

__all__ = ["ModelBuilders", "Models"]
