"""What a user would build instead of `tribunal serve`: a FastAPI service that
runs the seeds' Python metrics (benches/side_by_side) on each posted record and
answers its result as JSON. Run by scripts/bench-server with uvicorn, one
worker per core:

    uvicorn fastapi_app:app --workers 2 --no-access-log
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "side_by_side"))

from fastapi import FastAPI, HTTPException, Request  # noqa: E402

import context_agent  # noqa: E402
import ksi_emission  # noqa: E402

app = FastAPI()


SCORERS = {"ksi-emission": ksi_emission.score, "context-agent": context_agent.score}


@app.post("/v1/packs/{name}/check")
async def check(name: str, request: Request):
    scorer = SCORERS.get(name)
    if scorer is None:
        raise HTTPException(status_code=404, detail=f"no pack named {name}")
    record = await request.json()
    return scorer(record)


@app.get("/healthz")
async def healthz():
    return {"status": "ok"}
