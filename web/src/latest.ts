// A panel's REST loads can answer out of order: one begun when a turn ended (its `bump`) may
// come back after a later load, or after the user deleted or changed an item, and would put the
// older list back. Each load and each change takes a turn here; a load's answer is used only
// if nothing began after it.
export interface Latest {
  /** Marks a load as begun; the function it returns says whether its answer is still current. */
  begin(): () => boolean;
  /** A change made here since: every load in flight answers with state older than it. */
  invalidate(): void;
}

export function latestOnly(): Latest {
  let latest = 0;
  return {
    begin() {
      const mine = ++latest;
      return () => mine === latest;
    },
    invalidate() {
      latest++;
    },
  };
}
