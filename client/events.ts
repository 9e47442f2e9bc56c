// The typing hook for `sluice types` (docs/schemas.md, "Typed sends"): event data types by name.
// Empty here; the generated declaration adds names to it by declaration merging, and send,
// step.sendEvent and a function's `event.data` then check those names' data. Other names stay untyped.

/** Event name → the type of its `data`. Filled by `declare module 'sluice/client' { interface Events {…} }`. */
// biome-ignore lint/suspicious/noEmptyInterface: declaration merging fills it (sluice types)
export interface Events {}

/** The data of events named N as sent: its type in Events, else any JSON object. */
export type EventData<N extends string> = N extends keyof Events ? Events[N] : Record<string, unknown>

/** The data of events named N as a handler reads it: its type in Events, else untyped. */
export type HandlerData<N extends string> = N extends keyof Events ? Events[N] : Record<string, any>
