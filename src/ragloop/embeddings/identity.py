"""What made a set of vectors: a model id and a dimension, for any LangChain embeddings."""

from __future__ import annotations

from typing import Any

from ragloop.embeddings.base import LocalEmbeddings


def unwrap(emb: Any) -> Any:
    """The model under ragloop's wrappers (normalisation, caching)."""
    seen = 0
    while getattr(emb, "inner", None) is not None and seen < 8:
        emb, seen = emb.inner, seen + 1
    return emb


def model_id(emb: Any) -> str:
    """A stable name of the model behind ``emb``: its catalogue id, else class + model name."""
    emb = unwrap(emb)
    if isinstance(emb, LocalEmbeddings):
        return emb.model_id
    name = type(emb).__qualname__
    for attr in ("model", "model_name", "deployment"):
        value = getattr(emb, attr, None)
        if isinstance(value, str) and value:
            return f"{name}:{value}"
    return name


def known_dimension(emb: Any) -> int | None:
    """The vector length ``emb`` declares, without embedding anything (None if it does not)."""
    emb = unwrap(emb)
    for attr in ("dimension", "dimensions", "size", "dim"):
        value = getattr(emb, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def manifest_fields(emb: Any, spec: str, dimension: int | None) -> dict[str, Any]:
    """What an index manifest records about the vectors in it."""
    return {"embeddings": spec, "embeddings_model": model_id(emb), "embeddings_dim": dimension}


def mismatch_reasons(manifest: dict[str, Any], spec: str, emb: Any = None) -> list[str]:
    """Why vectors of ``emb`` (named ``spec``) cannot be compared with the index's (empty: ok).

    The model id decides when both sides know it: the spec alone cannot tell two different
    256-d models apart. An index without a model id (built before they were recorded) is
    judged by its spec name.
    """
    built_spec, built_model = manifest.get("embeddings"), manifest.get("embeddings_model")
    built_dim = manifest.get("embeddings_dim")
    if emb is None or not built_model:
        if built_spec != spec:
            return [f"built with embeddings '{built_spec}', asked for '{spec}'"]
        return []
    reasons = []
    asked = model_id(emb)
    if asked != built_model:
        reasons.append(
            f"built with embeddings '{built_spec}' (model {built_model}, {built_dim}-d), "
            f"asked for '{spec}' (model {asked})"
        )
    dim = known_dimension(emb)
    if not reasons and dim is not None and built_dim is not None and dim != built_dim:
        reasons.append(f"the index holds {built_dim}-d vectors, '{spec}' makes {dim}-d ones")
    return reasons
