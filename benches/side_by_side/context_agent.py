#!/usr/bin/env python3
"""Seed 003's `validate_result` (the ContextAgent's json_validator), as a user
would run it over a JSONL file instead of Tribunal: parse the output (reading a
```json fence too), the seed's three rules, its status table.

    python3 benches/side_by_side/context_agent.py INPUT.jsonl OUTPUT.jsonl
"""

from common import parse, run


def validate_result(result):
    issues = []
    # 1. TODO Residual Check
    readme = result.get("readme", "")
    if "TODO" in readme or "TBD" in readme or "FIXME" in readme:
        issues.append("README contains unfilled placeholders")
    # 2. Type Examples Completeness
    type_examples = result.get("type_examples", {})
    for t in ["type1", "type2", "type3", "type4"]:
        if t not in type_examples:
            issues.append(f"Missing {t} example")
        else:
            example = type_examples[t]
            if "yaml" not in example or "behavior" not in example:
                issues.append(f"{t} example incomplete")
    # 3. Check Logic Completeness
    check_logic = result.get("check_logic", {})
    if not check_logic.get("parsing_method"):
        issues.append("Missing parsing_method")
    if not check_logic.get("pass_fail_logic"):
        issues.append("Missing pass_fail_logic")
    # Status Determination
    if not issues:
        status = "PASS"
    elif len(issues) <= 2:
        status = "NEEDS_IMPROVEMENT"
    else:
        status = "FAIL"
    return status, issues


def score(record):
    result = parse(record["output"])
    if isinstance(result, dict):
        status, issues = validate_result(result)
    else:
        status, issues = "FAIL", ["output has no JSON object"]
    feedback = f"Previous issues: {issues}" if issues else None
    return {"id": record.get("id"), "status": status, "issues": issues, "feedback": feedback}


if __name__ == "__main__":
    run(score)
