"""The Sluice SDK test app written with PyPI inngest 0.5.x on Flask (docs/inngest-sdk-protocol.md).

The same function set as the TypeScript and Go apps; every output is derived from the event, so
the tests can assert it through Sluice's runs API. The SDK reads its INNGEST_* variables itself.
"""

import datetime
import os

import flask
import inngest
import inngest.flask

client = inngest.Inngest(app_id="sdk-python")


def on(name: str) -> inngest.TriggerEvent:
    return inngest.TriggerEvent(event=name)


@client.create_function(fn_id="steps", trigger=on("sdk/steps"))
def steps(ctx: inngest.ContextSync) -> dict:
    a = ctx.step.run("a", lambda: ctx.event.data["a"])
    b = ctx.step.run("b", lambda: ctx.event.data["b"])
    return {"sum": a + b}


@client.create_function(fn_id="parallel", trigger=on("sdk/parallel"))
def parallel(ctx: inngest.ContextSync) -> dict:
    a, b = ctx.group.parallel(
        (
            lambda: ctx.step.run("double", lambda: ctx.event.data["a"] * 2),
            lambda: ctx.step.run("triple", lambda: ctx.event.data["b"] * 3),
        )
    )
    return {"sum": a + b}


@client.create_function(fn_id="sleep", trigger=on("sdk/sleep"))
def sleep(ctx: inngest.ContextSync) -> dict:
    ctx.step.sleep("nap", datetime.timedelta(seconds=2))
    woke = ctx.step.run("after", lambda: ctx.event.data["id"])
    return {"woke": woke}


@client.create_function(fn_id="wait", trigger=on("sdk/wait"))
def wait(ctx: inngest.ContextSync) -> dict:
    approval = ctx.step.wait_for_event(
        "approval",
        event="sdk/approve",
        if_exp="event.data.id == async.data.id",
        timeout=datetime.timedelta(minutes=1),
    )
    return {"approved": approval.data["id"] if approval is not None else None}


@client.create_function(fn_id="invoke", trigger=on("sdk/invoke"))
def invoke(ctx: inngest.ContextSync) -> dict:
    data = {"a": ctx.event.data["a"], "b": ctx.event.data["b"]}
    result = ctx.step.invoke("call-steps", function=steps, data=data)
    return {"invoked": result}


@client.create_function(fn_id="fail", trigger=on("sdk/fail"), retries=1)
def fail(ctx: inngest.ContextSync) -> None:
    def boom() -> None:
        raise inngest.NonRetriableError(f"no retry for {ctx.event.data['id']}")

    ctx.step.run("boom", boom)


@client.create_function(fn_id="retry", trigger=on("sdk/retry"), retries=2)
def retry(ctx: inngest.ContextSync) -> dict:
    def flaky() -> str:
        if ctx.attempt == 0:
            raise Exception("attempt 0 fails")
        return f"ok on attempt {ctx.attempt}"

    return {"flaky": ctx.step.run("flaky", flaky)}


def work(ctx: inngest.ContextSync) -> dict:
    return {"id": ctx.step.run("work", lambda: ctx.event.data["id"])}


concurrency = client.create_function(
    fn_id="concurrency",
    trigger=on("sdk/concurrency"),
    concurrency=[inngest.Concurrency(limit=1, key="event.data.key")],
)(work)
throttle = client.create_function(
    fn_id="throttle",
    trigger=on("sdk/throttle"),
    throttle=inngest.Throttle(limit=1, period=datetime.timedelta(seconds=5), key="event.data.key"),
)(work)
rate_limit = client.create_function(
    fn_id="rate-limit",
    trigger=on("sdk/rate-limit"),
    rate_limit=inngest.RateLimit(limit=1, period=datetime.timedelta(seconds=10), key="event.data.key"),
)(work)
debounce = client.create_function(
    fn_id="debounce",
    trigger=on("sdk/debounce"),
    debounce=inngest.Debounce(period=datetime.timedelta(seconds=2), key="event.data.key"),
)(work)
idempotency = client.create_function(
    fn_id="idempotency", trigger=on("sdk/idempotency"), idempotency="event.data.key"
)(work)


@client.create_function(
    fn_id="batch",
    trigger=on("sdk/batch"),
    batch_events=inngest.Batch(max_size=3, timeout=datetime.timedelta(seconds=2)),
)
def batch(ctx: inngest.ContextSync) -> dict:
    return {"count": len(ctx.events), "ids": [e.data["id"] for e in ctx.events]}


@client.create_function(
    fn_id="cancel",
    trigger=on("sdk/cancellable"),
    cancel=[inngest.Cancel(event="sdk/cancel", if_exp="event.data.id == async.data.id")],
)
def cancel(ctx: inngest.ContextSync) -> dict:
    ctx.step.sleep("long", datetime.timedelta(minutes=1))
    return {"id": ctx.event.data["id"]}


@client.create_function(fn_id="cron", trigger=inngest.TriggerCron(cron="TZ=Europe/Paris 0 3 * * *"))
def cron(ctx: inngest.ContextSync) -> str:
    return "tick"


def failed(ctx: inngest.ContextSync) -> dict:
    return {"failed": ctx.event.data["event"]["data"]["id"]}


@client.create_function(fn_id="on-failure", trigger=on("sdk/on-failure"), retries=0, on_failure=failed)
def on_failure(ctx: inngest.ContextSync) -> None:
    def boom() -> None:
        raise Exception(f"failed for {ctx.event.data['id']}")

    ctx.step.run("boom", boom)


@client.create_function(fn_id="send", trigger=on("sdk/send"))
def send(ctx: inngest.ContextSync) -> dict:
    ctx.step.send_event("emit", inngest.Event(name="sdk/sent", data={"id": ctx.event.data["id"]}))
    return {"sent": ctx.event.data["id"]}


app = flask.Flask(__name__)
inngest.flask.serve(
    app,
    client,
    [steps, parallel, sleep, wait, invoke, fail, retry, concurrency, throttle, rate_limit, debounce,
     idempotency, batch, cancel, cron, on_failure, send],
)

if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ["PORT"]), threaded=True)
