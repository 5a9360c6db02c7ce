"""Every example of docs/python.md runs, as a doctest, from the repository root."""

import doctest


def test_the_python_guide_examples(root, monkeypatch):
    monkeypatch.chdir(root)
    failures, tried = doctest.testfile(
        str(root / "docs/python.md"),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
        verbose=False,
    )
    assert tried > 20
    assert failures == 0, "see the doctest report above"
