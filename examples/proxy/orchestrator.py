"""Train a Python agent with trajectory-recorder's recording proxy, from Python.

The agent is an ordinary tool loop on the official `openai` SDK; it knows
nothing of recording. This orchestrator opens one rollout per episode on the
proxy, hands the agent the rollout's base URL and key, scores the answer,
finishes the rollout, groups the rollouts and asks the proxy to train.

    npx trajectory-recorder emulator --port 8000 &
    WANDB_API_KEY=local TRAINING_SERVICE_BASE_URL=http://127.0.0.1:8000/v1 \
      npx trajectory-recorder proxy --model demo/python-agent --base-model emulator/toy --port 8400 &
    pip install openai
    PROXY_URL=http://127.0.0.1:8400 python examples/proxy/orchestrator.py

Environment: PROXY_URL (default http://127.0.0.1:8400), PROXY_CONTROL_KEY (when
the proxy has one), STEPS (default 4), GROUP_SIZE (default 8).
"""

import json
import os
import random
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import openai

PROXY = os.environ.get("PROXY_URL", "http://127.0.0.1:8400").rstrip("/")
CONTROL_KEY = os.environ.get("PROXY_CONTROL_KEY")
FRUITS = ["apple", "banana", "cherry", "grape"]
COUNTS = ["one", "two", "three", "four"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "check_stock",
            "description": "How many of a fruit the stall has left.",
            "parameters": {
                "type": "object",
                "properties": {"fruit": {"type": "string", "enum": FRUITS}},
                "required": ["fruit"],
                "additionalProperties": False,
            },
        },
    }
]


def control(method, path, body=None):
    """One call of the proxy's control API; its errors name the field that was wrong."""
    request = urllib.request.Request(f"{PROXY}{path}", method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("content-type", "application/json")
    if CONTROL_KEY:
        request.add_header("authorization", f"Bearer {CONTROL_KEY}")
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        raise SystemExit(f"{method} {path} failed ({error.code}): {error.read().decode()}")


def agent(base_url, api_key, question, stock, seed):
    """The agent: it only sees an OpenAI base URL and a key."""
    client = openai.OpenAI(base_url=base_url, api_key=api_key)
    messages = [
        {"role": "system", "content": "You keep a fruit stall. Check the stock before answering."},
        {"role": "user", "content": question},
    ]
    for turn in range(3):
        message = client.chat.completions.create(
            model="", messages=messages, tools=TOOLS, max_tokens=3, seed=seed * 7 + turn
        ).choices[0].message
        calls = message.tool_calls or []
        entry = {"role": "assistant", "content": message.content}
        if calls:
            entry["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                for c in calls
            ]
        messages.append(entry)
        if not calls:
            return messages
        for call in calls:
            try:
                fruit = json.loads(call.function.arguments).get("fruit")
            except ValueError:
                fruit = None
            answer = f"{stock[fruit]} left" if fruit in stock else f"error: no such fruit {fruit}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
    return messages


def reward(messages, fruit, stock):
    """Half for checking the right fruit, half for then saying exactly its count."""
    checked = any(
        json.loads(c["function"]["arguments"] or "{}").get("fruit") == fruit
        for m in messages
        for c in m.get("tool_calls", [])
        if c["function"]["name"] == "check_stock" and c["function"]["arguments"].startswith("{")
    )
    if not checked:
        return 0.0
    last = messages[-1]
    said = {w for w in (last.get("content") or "").split() if w in COUNTS} if last["role"] == "assistant" else set()
    return 1.0 if said == {stock[fruit]} else 0.5


def episode(fruit, seed):
    rng = random.Random(seed)
    stock = {f: rng.choice(COUNTS) for f in FRUITS}
    rollout = control("POST", "/rollouts", {"metadata": {"fruit": fruit, "stock": json.dumps(stock)}})
    messages = agent(rollout["base_url"], rollout["api_key"], f"how many {fruit} are left", stock, seed)
    score = reward(messages, fruit, stock)
    finished = control("POST", f"/rollouts/{rollout['id']}/finish", {"reward": score, "metrics": {"turns": len(messages)}})
    return finished["id"], score


def main():
    steps = int(os.environ.get("STEPS", "4"))
    size = int(os.environ.get("GROUP_SIZE", "8"))
    means = []
    with ThreadPoolExecutor(max_workers=16) as pool:
        for step in range(steps + 1):
            groups, scores = [], []
            for f, fruit in enumerate(FRUITS):
                results = list(pool.map(lambda i: episode(fruit, 1_000_000 + step * 10_000 + f * 100 + i), range(size)))
                scores += [score for _, score in results]
                groups.append(control("POST", "/groups", {"rollouts": [rid for rid, _ in results]})["id"])
            means.append(sum(scores) / len(scores))
            if step == steps:
                print(f"on the last checkpoint: reward {means[-1]:.3f}", flush=True)
                break
            result = control("POST", "/train", {"groups": groups, "learning_rate": 2e-5})
            print(f"step {step}: reward {means[-1]:.3f} -> checkpoint {result['step']}", flush=True)
    print(json.dumps({"rewards": means}), flush=True)


if __name__ == "__main__":
    main()
