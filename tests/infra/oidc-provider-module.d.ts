// oidc-provider 9 ships no type declarations; the tests use its constructor, listen and close only.
declare module 'oidc-provider' {
  const Provider: new (
    issuer: string,
    configuration: Record<string, unknown>,
  ) => { callback(): (req: unknown, res: unknown) => void; proxy: boolean }
  export default Provider
}
