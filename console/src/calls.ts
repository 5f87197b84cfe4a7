import { useCallback, useRef, useState } from "preact/hooks";

import { ApiError, errorText } from "./api";

/**
 * A form's call to the API: busy while it runs; when it fails (and the shell does not take the
 * error, as it does for a rejected token), the API's message is shown and focused.
 */
export function useSubmit(onApiError: (e: ApiError) => boolean) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const errorBox = useRef<HTMLParagraphElement>(null);

  function fail(text: string) {
    setError(text);
    queueMicrotask(() => errorBox.current?.focus());
  }

  async function run(action: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      if (e instanceof ApiError && onApiError(e)) return;
      fail(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  return { busy, error, errorBox, fail, run };
}

/**
 * A screen's polled read for `usePolling`: `read` (stable: wrap it in `useCallback`) puts
 * what it fetched in the screen's state; a failure shows the API's message through
 * `setError`, a success clears it. Never asks for the fast poll.
 */
export function useRead(
  read: () => Promise<void>,
  setError: (text: string | null) => void,
  onApiError: (e: ApiError) => boolean,
): () => Promise<boolean> {
  return useCallback(async () => {
    try {
      await read();
      setError(null);
    } catch (e) {
      if (!(e instanceof ApiError && onApiError(e))) setError(errorText(e));
    }
    return false;
  }, [read, setError, onApiError]);
}
