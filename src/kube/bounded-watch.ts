// client-node's Watch with what client-go's reflector asks of every watch: bookmarks, a server-side timeout, and an
// end to a stream that went silent. client-node sets none of them. A stream stalled on its way (a proxy or a load
// balancer that stops forwarding but keeps the connection open) would otherwise leave an informer waiting forever.
import * as k8s from '@kubernetes/client-node';

export interface WatchBounds {
  /**
   * No line for this long ends the stream. The API server sends a bookmark about once a minute to a watch that asks
   * for them, so a quiet resource still speaks.
   */
  idleMs: number;
  /** The API server ends each watch after this many seconds; the informer resumes from its resourceVersion. */
  timeoutSeconds: () => number;
}

export const DEFAULT_WATCH_BOUNDS: WatchBounds = {
  idleMs: 150_000,
  // As client-go's reflector: 5 to 10 minutes, spread so that many watches do not end together.
  timeoutSeconds: () => 300 + Math.floor(Math.random() * 300),
};

/** A watch that delivered neither an event nor a bookmark within its idle bound. */
export class StalledWatchError extends Error {
  override name = 'StalledWatchError';
}

export class BoundedWatch extends k8s.Watch {
  constructor(
    kc: k8s.KubeConfig,
    private readonly bounds: WatchBounds = DEFAULT_WATCH_BOUNDS,
  ) {
    super(kc);
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    let ended = false;
    // Known once the API server answered; the idle timer may fire before.
    const pending: { request?: AbortController } = {};
    let timer: NodeJS.Timeout | undefined;
    const end = (err: unknown) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      done(err);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        // Told first, so that the abort's own error is not what the informer hears.
        end(new StalledWatchError(`no event or bookmark for ${this.bounds.idleMs / 1000} s on ${path}`));
        pending.request?.abort();
      }, this.bounds.idleMs);
    };
    arm();
    const params = { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: this.bounds.timeoutSeconds() };
    try {
      pending.request = await super.watch(
        path,
        params,
        (phase, apiObj, watchObj) => {
          arm();
          callback(phase, apiObj, watchObj);
        },
        end,
      );
    } catch (err) {
      // Thrown before any request (a kubeconfig it cannot use): the caller hears it, and the timer has nothing to end.
      ended = true;
      clearTimeout(timer);
      throw err;
    }
    // Stalled before the API server even answered.
    if (ended) pending.request.abort();
    return pending.request;
  }
}
