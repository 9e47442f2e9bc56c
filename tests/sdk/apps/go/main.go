// The Sluice SDK test app written with github.com/inngest/inngestgo v0.16.0 on net/http
// (tests/sdk/apps/ts/functions.ts has the same function set). Every output is derived from the
// event, so the tests assert it through Sluice's runs API. The SDK reads its INNGEST_* variables
// itself. inngestgo has no onFailure handler, so this app has no "on-failure" function.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/inngest/inngestgo"
	sdkerrors "github.com/inngest/inngestgo/errors"
	"github.com/inngest/inngestgo/group"
	"github.com/inngest/inngestgo/step"
)

type data = map[string]any
type input = inngestgo.Input[data]

func num(in input, key string) float64 {
	v, _ := in.Event.Data[key].(float64)
	return v
}

func must(_ inngestgo.ServableFunction, err error) {
	if err != nil {
		panic(err)
	}
}

func on(name string) inngestgo.Trigger { return inngestgo.EventTrigger(name, nil) }

func define(c inngestgo.Client) inngestgo.ServableFunction {
	steps, err := inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "steps"}, on("sdk/steps"),
		func(ctx context.Context, in input) (any, error) {
			a, err := step.Run(ctx, "a", func(ctx context.Context) (float64, error) { return num(in, "a"), nil })
			if err != nil {
				return nil, err
			}
			b, err := step.Run(ctx, "b", func(ctx context.Context) (float64, error) { return num(in, "b"), nil })
			if err != nil {
				return nil, err
			}
			return data{"sum": a + b}, nil
		})
	must(steps, err)
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "parallel"}, on("sdk/parallel"),
		func(ctx context.Context, in input) (any, error) {
			res := group.Parallel(ctx,
				func(ctx context.Context) (any, error) {
					return step.Run(ctx, "double", func(ctx context.Context) (float64, error) { return num(in, "a") * 2, nil })
				},
				func(ctx context.Context) (any, error) {
					return step.Run(ctx, "triple", func(ctx context.Context) (float64, error) { return num(in, "b") * 3, nil })
				},
			)
			if err := res.AnyError(); err != nil {
				return nil, err
			}
			return data{"sum": res[0].Value.(float64) + res[1].Value.(float64)}, nil
		}))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "sleep"}, on("sdk/sleep"),
		func(ctx context.Context, in input) (any, error) {
			step.Sleep(ctx, "nap", 2*time.Second)
			woke, err := step.Run(ctx, "after", func(ctx context.Context) (any, error) { return in.Event.Data["id"], nil })
			return data{"woke": woke}, err
		}))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "wait"}, on("sdk/wait"),
		func(ctx context.Context, in input) (any, error) {
			approval, err := step.WaitForEvent[inngestgo.GenericEvent[data]](ctx, "approval", step.WaitForEventOpts{
				Event:   "sdk/approve",
				If:      inngestgo.StrPtr("event.data.id == async.data.id"),
				Timeout: time.Minute,
			})
			if errors.Is(err, step.ErrEventNotReceived) {
				return data{"approved": nil}, nil
			}
			if err != nil {
				return nil, err
			}
			return data{"approved": approval.Data["id"]}, nil
		}))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "invoke"}, on("sdk/invoke"),
		func(ctx context.Context, in input) (any, error) {
			result, err := step.Invoke[any](ctx, "call-steps", step.InvokeOpts{
				FunctionId: steps.FullyQualifiedID(),
				Data:       data{"a": in.Event.Data["a"], "b": in.Event.Data["b"]},
			})
			return data{"invoked": result}, err
		}))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "fail", Retries: inngestgo.IntPtr(1)}, on("sdk/fail"),
		func(ctx context.Context, in input) (any, error) {
			_, err := step.Run(ctx, "boom", func(ctx context.Context) (any, error) {
				return nil, sdkerrors.NoRetryError(fmt.Errorf("no retry for %v", in.Event.Data["id"]))
			})
			return nil, err
		}))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "retry", Retries: inngestgo.IntPtr(2)}, on("sdk/retry"),
		func(ctx context.Context, in input) (any, error) {
			flaky, err := step.Run(ctx, "flaky", func(ctx context.Context) (string, error) {
				if in.InputCtx.Attempt == 0 {
					return "", errors.New("attempt 0 fails")
				}
				return fmt.Sprintf("ok on attempt %d", in.InputCtx.Attempt), nil
			})
			return data{"flaky": flaky}, err
		}))
	defineFlow(c)
	return steps
}

func work(ctx context.Context, in input) (any, error) {
	id, err := step.Run(ctx, "work", func(ctx context.Context) (any, error) { return in.Event.Data["id"], nil })
	return data{"id": id}, err
}

func defineFlow(c inngestgo.Client) {
	key := inngestgo.StrPtr("event.data.key")
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "concurrency",
		Concurrency: &inngestgo.ConfigConcurrency{Step: []inngestgo.ConfigStepConcurrency{{Limit: 1, Key: key}}}},
		on("sdk/concurrency"), work))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "throttle",
		Throttle: &inngestgo.ConfigThrottle{Limit: 1, Period: 5 * time.Second, Key: key}}, on("sdk/throttle"), work))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "rate-limit",
		RateLimit: &inngestgo.ConfigRateLimit{Limit: 1, Period: 10 * time.Second, Key: key}}, on("sdk/rate-limit"), work))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "debounce",
		Debounce: &inngestgo.ConfigDebounce{Period: 2 * time.Second, Key: *key}}, on("sdk/debounce"), work))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "idempotency", Idempotency: key},
		on("sdk/idempotency"), work))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "batch",
		BatchEvents: &inngestgo.ConfigBatchEvents{MaxSize: 3, Timeout: 2 * time.Second}}, on("sdk/batch"),
		func(ctx context.Context, in input) (any, error) {
			ids := []any{}
			for _, e := range in.Events {
				ids = append(ids, e.Data["id"])
			}
			return data{"count": len(in.Events), "ids": ids}, nil
		}))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "cancel", Cancel: []inngestgo.ConfigCancel{
		{Event: "sdk/cancel", If: inngestgo.StrPtr("event.data.id == async.data.id")}}}, on("sdk/cancellable"),
		func(ctx context.Context, in input) (any, error) {
			step.Sleep(ctx, "long", time.Minute)
			return data{"id": in.Event.Data["id"]}, nil
		}))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "cron"},
		inngestgo.CronTrigger("TZ=Europe/Paris 0 3 * * *"),
		func(ctx context.Context, in input) (any, error) { return "tick", nil }))
	must(inngestgo.CreateFunction(c, inngestgo.FunctionOpts{ID: "send"}, on("sdk/send"),
		func(ctx context.Context, in input) (any, error) {
			_, err := step.Send(ctx, "emit", inngestgo.Event{Name: "sdk/sent", Data: data{"id": in.Event.Data["id"]}})
			return data{"sent": in.Event.Data["id"]}, err
		}))
}

func main() {
	client, err := inngestgo.NewClient(inngestgo.ClientOpts{AppID: "sdk-go"})
	if err != nil {
		panic(err)
	}
	define(client)
	mux := http.NewServeMux()
	mux.Handle("/api/inngest", client.Serve())
	addr := "127.0.0.1:" + os.Getenv("PORT")
	fmt.Println("listening on", addr)
	if err := http.ListenAndServe(addr, mux); err != nil {
		panic(err)
	}
}
