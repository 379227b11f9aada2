/** What a thrown value says, for a log field or a one-line error: libraries throw Errors, plain objects and strings. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  const message = (err as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : String(err);
}
