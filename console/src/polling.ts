import { useEffect, useRef } from "preact/hooks";

/**
 * Calls `load` now and again every `slowMs` (or `fastMs` while `load` answers true), never
 * while the tab is hidden; returns a function that reloads at once.
 */
export function usePolling(load: () => Promise<boolean | undefined>, slowMs: number, fastMs = slowMs): () => void {
  const poke = useRef<() => void>(() => undefined);
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    const tick = async () => {
      window.clearTimeout(timer);
      const fast = document.hidden ? false : await load();
      if (!stopped) timer = window.setTimeout(tick, fast ? fastMs : slowMs);
    };
    const onVisible = () => {
      if (!document.hidden) void tick();
    };
    poke.current = () => void tick();
    document.addEventListener("visibilitychange", onVisible);
    void tick();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [load, slowMs, fastMs]);
  return () => poke.current();
}
