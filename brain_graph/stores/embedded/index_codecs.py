"""The embedded store's cached indexes as the arrays and meta of :mod:`.index_files`, and back.

Each ``*_parts`` function gives a JSON-able meta (node ids, names, codes) and named numpy arrays;
each ``*_from_parts`` function rebuilds the index over the arrays as given (memory-mapped ones stay
mapped) after checking that every array has the shape, type and bounds the index needs, and gives
None when one does not (a damaged or foreign file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from brain_graph.stores.embedded.facets import FacetColumns
from brain_graph.stores.embedded.lexical import LexicalIndex
from brain_graph.stores.embedded.string_table import StringTable
from brain_graph.stores.embedded.vectors import VectorMatrix

MATRIX = "vector-matrix"
LEXICAL = "lexical-index"

Meta = dict[str, Any]
Arrays = dict[str, npt.NDArray[Any]]
Groups = Mapping[str, npt.NDArray[np.intp]]


def _grouped(prefix: str, groups: Groups, meta: Meta, arrays: Arrays) -> None:
    """Rows of each name end to end (``<prefix>_rows``), the names and where each one's rows end."""
    names = sorted(groups)
    ends = np.cumsum([len(groups[name]) for name in names], dtype=np.int64).tolist() if names else []
    rows = np.concatenate([groups[name] for name in names]) if names else np.zeros(0, dtype=np.intp)
    meta[prefix] = [names, ends]
    arrays[f"{prefix}_rows"] = rows.astype(np.intp, copy=False)


def _ungrouped(prefix: str, meta: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]]) -> dict[str, Any]:
    names, ends = meta[prefix]
    rows = arrays[f"{prefix}_rows"]
    if len(names) != len(ends) or (ends and ends[-1] != len(rows)) or ends != sorted(ends):
        raise ValueError(f"{prefix}: names and bounds disagree")
    starts = [0, *ends][: len(ends)]
    return {str(name): rows[start:end] for name, start, end in zip(names, starts, ends, strict=True)}


def _strings(prefix: str, strings: Sequence[str], arrays: Arrays) -> None:
    table = strings if isinstance(strings, StringTable) else StringTable.of(strings)
    arrays[f"{prefix}_data"], arrays[f"{prefix}_offsets"] = table.data, table.offsets


def _table(prefix: str, arrays: Mapping[str, npt.NDArray[Any]]) -> StringTable:
    table = StringTable(arrays[f"{prefix}_data"], arrays[f"{prefix}_offsets"])
    if not table.fits():
        raise ValueError(f"{prefix}: offsets outside the data")
    return table


def _facet_parts(facets: FacetColumns, meta: Meta, arrays: Arrays) -> None:
    arrays.update(
        projects=facets.projects,
        node_types=facets.node_types,
        namespaces=facets.namespaces,
        updated_at=facets.updated_at,
        timed=facets.timed,
    )
    meta.update(
        project_codes=facets.project_codes, type_codes=facets.type_codes, namespace_codes=facets.namespace_codes
    )
    _grouped("tags", facets.tag_rows, meta, arrays)


def _facets(meta: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]]) -> FacetColumns:
    return FacetColumns(
        projects=arrays["projects"],
        project_codes=dict(meta["project_codes"]),
        node_types=arrays["node_types"],
        type_codes=dict(meta["type_codes"]),
        namespaces=arrays["namespaces"],
        namespace_codes=dict(meta["namespace_codes"]),
        tag_rows=_ungrouped("tags", meta, arrays),
        updated_at=arrays["updated_at"],
        timed=arrays["timed"],
    )


def _shaped(checks: Sequence[tuple[npt.NDArray[Any], Any, tuple[int, ...]]]) -> bool:
    return all(array.dtype == dtype and array.shape == shape for array, dtype, shape in checks)


def _row_indexes(groups: Sequence[npt.NDArray[Any]], rows: int) -> bool:
    """Whether each array holds row indexes (``intp``) below ``rows``."""
    for held in groups:
        if held.dtype != np.intp or held.ndim != 1 or (len(held) and (held.min() < 0 or held.max() >= rows)):
            return False
    return True


def _columns_fit(rows: int, secured: npt.NDArray[Any], acl: Groups, facets: FacetColumns) -> bool:
    """The visibility and facet columns of ``rows`` rows."""
    columns = [
        (secured, np.bool_, (rows,)),
        (facets.projects, np.int32, (rows,)),
        (facets.node_types, np.int32, (rows,)),
        (facets.namespaces, np.int32, (rows,)),
        (facets.updated_at, np.int64, (rows,)),
        (facets.timed, np.bool_, (rows,)),
    ]
    return _shaped(columns) and _row_indexes([*acl.values(), *facets.tag_rows.values()], rows)


def matrix_parts(matrix: VectorMatrix) -> tuple[Meta, Arrays]:
    meta: Meta = {
        "tenant_id": matrix.tenant_id,
        "dimension": int(matrix.vectors.shape[1]),
        "row_projects": [[project, start, end] for project, (start, end) in matrix.projects.items()],
    }
    arrays: Arrays = {
        "vectors": matrix.vectors,
        "norms_sq": matrix.norms_sq,
        "inv_norms": matrix.inv_norms,
        "exact_rows": matrix.exact_rows,
        "secured": matrix.secured,
    }
    _strings("node_ids", matrix.node_ids, arrays)
    _grouped("acl", matrix.acl_index, meta, arrays)
    _facet_parts(matrix.facets, meta, arrays)
    return meta, arrays


def matrix_from_parts(
    meta: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]], dimension: int
) -> VectorMatrix | None:
    """The matrix of ``dimension`` the parts hold, or None."""
    try:
        if meta["dimension"] != dimension:
            return None
        matrix = VectorMatrix(
            tenant_id=meta["tenant_id"],
            node_ids=_table("node_ids", arrays),
            vectors=arrays["vectors"],
            norms_sq=arrays["norms_sq"],
            inv_norms=arrays["inv_norms"],
            exact_rows=arrays["exact_rows"],
            projects={project: (start, end) for project, start, end in meta["row_projects"]},
            secured=arrays["secured"],
            acl_index=_ungrouped("acl", meta, arrays),
            facets=_facets(meta, arrays),
        )
    except (KeyError, TypeError, ValueError):
        return None
    rows = len(matrix.node_ids)
    fits = _shaped(
        [
            (matrix.vectors, np.float32, (rows, dimension)),
            (matrix.norms_sq, np.float64, (rows,)),
            (matrix.inv_norms, np.float32, (rows,)),
        ]
    ) and _row_indexes([matrix.exact_rows], rows)
    fits = fits and all(0 <= start <= end <= rows for start, end in matrix.projects.values())
    return matrix if fits and _columns_fit(rows, matrix.secured, matrix.acl_index, matrix.facets) else None


def lexical_parts(index: LexicalIndex) -> tuple[Meta, Arrays]:
    meta: Meta = {"tenant_id": index.tenant_id, "total_length": index.total_length}
    arrays: Arrays = {
        "lengths": index.lengths,
        "offsets": index.offsets,
        "posting_rows": index.posting_rows,
        "posting_counts": index.posting_counts,
        "secured": index.secured,
    }
    _strings("node_ids", index.node_ids, arrays)
    _strings("terms", index.terms, arrays)
    _grouped("acl", index.acl_index, meta, arrays)
    _facet_parts(index.facets, meta, arrays)
    return meta, arrays


def lexical_from_parts(meta: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]]) -> LexicalIndex | None:
    """The lexical index the parts hold, or None."""
    try:
        terms = _table("terms", arrays)
        index = LexicalIndex(
            tenant_id=meta["tenant_id"],
            node_ids=_table("node_ids", arrays),
            lengths=arrays["lengths"],
            terms=terms,
            offsets=arrays["offsets"],
            posting_rows=arrays["posting_rows"],
            posting_counts=arrays["posting_counts"],
            total_length=int(meta["total_length"]),
            secured=arrays["secured"],
            acl_index=_ungrouped("acl", meta, arrays),
            facets=_facets(meta, arrays),
        )
    except (KeyError, TypeError, ValueError):
        return None
    rows, postings = len(index.node_ids), len(index.posting_rows)
    offsets = index.offsets
    fits = _shaped(
        [
            (index.lengths, np.float64, (rows,)),
            (offsets, np.int64, (len(terms) + 1,)),
            (index.posting_counts, np.float64, (postings,)),
        ]
    ) and _row_indexes([index.posting_rows], rows)
    fits = fits and int(offsets[0]) == 0 and int(offsets[-1]) == postings and bool(np.all(np.diff(offsets) >= 0))
    return index if fits and _columns_fit(rows, index.secured, index.acl_index, index.facets) else None
