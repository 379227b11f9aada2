/**
 * Polls until check() returns a value other than undefined/false (conditions, not fixed sleeps): the one polling
 * helper of the tests, the demo and the bench. `what` names the condition, or describes the state it was in when
 * the time ran out.
 */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  what: string | (() => string | Promise<string>) = 'condition',
  intervalMs = 25,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline) {
      const described = typeof what === 'string' ? what : await what();
      throw new Error(`timed out after ${(timeoutMs / 1000).toFixed(1)} s waiting for ${described}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
