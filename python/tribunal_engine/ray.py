"""Scoring Ray Data datasets with a Tribunal pack.

``Scorer`` is a callable class for ``Dataset.map_batches``: Ray builds one per
worker (the pack loads once per worker), and each batch comes back with its
columns plus ``status``, ``passed``, ``score`` (NaN where a record has no
score) and ``result`` (the CLI's result record, as one line of JSON, without
its ``line``: a batch does not know where it is in the dataset)::

    import ray, tribunal_engine.ray

    ds = ray.data.read_json("data.jsonl")        # columns id, output, ...
    scored = ds.map_batches(
        tribunal_engine.ray.Scorer,
        fn_constructor_args=("rules/ksi-emission",),
        concurrency=2,
    )

A batch is a dict of numpy arrays (Ray's default batch format) or a pandas
DataFrame. Records are read from the columns ``id``, ``output``, ``expected``
and ``meta`` (names configurable), or, with ``json_column``, from one column
holding each record as a line of JSON (what ``ray.data.read_text`` gives; use
it when the records' fields do not share one type, which Arrow needs).
This module imports neither Ray nor numpy until a batch arrives.
"""

from __future__ import annotations

from os import PathLike
from typing import Any, Mapping, Optional, Sequence, Union

from ._native import Pack

__all__ = ["Scorer"]

class Scorer:
    """Scores batches of records with one pack, loaded once per instance.

    ``pack``: a ``tribunal.Pack`` or a path; ``overrides`` and ``plugin_dirs`` as
    in ``Pack.load``. ``jobs``: threads per batch (default 1: Ray runs one
    scorer per worker; raise it when a worker has several CPUs).
    """

    def __init__(
        self,
        pack: Union[Pack, str, "PathLike[str]"],
        overrides: Optional[Mapping[str, Any]] = None,
        plugin_dirs: Optional[Sequence[Union[str, "PathLike[str]"]]] = None,
        *,
        output_column: str = "output",
        id_column: str = "id",
        expected_column: str = "expected",
        meta_column: str = "meta",
        json_column: Optional[str] = None,
        jobs: int = 1,
    ) -> None:
        if isinstance(pack, Pack):
            if overrides or plugin_dirs:
                raise TypeError(
                    "overrides and plugin_dirs apply when the scorer loads the pack: "
                    "give the pack's path, or load the Pack with them"
                )
            self.pack = pack
        else:
            self.pack = Pack.load(pack, overrides=overrides, plugin_dirs=plugin_dirs)
        self.columns = {
            "id": id_column,
            "output": output_column,
            "expected": expected_column,
            "meta": meta_column,
        }
        self.json_column = json_column
        self.jobs = jobs

    def __call__(self, batch: Any) -> Any:
        if hasattr(batch, "columns") and hasattr(batch, "assign"):  # pandas
            columns = {name: batch[name].tolist() for name in batch.columns}
            scored = self._score(columns, len(batch))
            return batch.assign(**scored)
        if isinstance(batch, Mapping):
            columns = {name: _plain(values) for name, values in batch.items()}
            rows = len(next(iter(columns.values()))) if columns else 0
            scored = self._score(columns, rows)
            out = dict(batch)
            out.update(scored)
            return out
        raise TypeError(
            "tribunal_engine.ray.Scorer takes a dict of columns or a pandas DataFrame "
            f"(batch_format 'numpy' or 'pandas'), not {type(batch).__name__}"
        )

    def records(self, columns: Mapping[str, list], rows: int) -> list:
        """The batch's records, as ``evaluate_many`` takes them."""
        if self.json_column is not None:
            return [_json_record(line) for line in columns[self.json_column]]
        present = {
            field: columns[name] for field, name in self.columns.items() if name in columns
        }
        # A missing value in a column (None, NaN, pandas' NA) is an absent field.
        return [
            {
                field: values[i]
                for field, values in present.items()
                if not _missing(values[i])
            }
            for i in range(rows)
        ]

    def _score(self, columns: Mapping[str, list], rows: int) -> dict:
        import numpy as np

        # A batch does not know its place in the dataset: no `line` in the records.
        results = self.pack.evaluate_many(
            self.records(columns, rows), jobs=self.jobs, first_line=None
        )
        return {
            "status": np.array([r.status for r in results], dtype=object),
            "passed": np.array([r.passed for r in results], dtype=bool),
            "score": np.array(
                [np.nan if r.score is None else r.score for r in results], dtype=float
            ),
            "result": np.array([r.to_json() for r in results], dtype=object),
        }


def _missing(value: Any) -> bool:
    """None, a float NaN, or pandas' NA/NaT: what a column holds where a record
    has no value."""
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    return type(value).__name__ in ("NAType", "NaTType")


def _plain(values: Any) -> list:
    """A column as a list of plain Python values (numpy arrays through ``tolist``)."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _json_record(line: Any) -> Any:
    """One line of JSON: ``evaluate_many`` reads a string record as the CLI reads
    a JSONL line (a line that is not JSON becomes an ERROR result naming why)."""
    if isinstance(line, bytes):
        return line.decode("utf-8", errors="replace")
    return line
