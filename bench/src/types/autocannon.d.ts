// The part of autocannon's API the bench uses (the package ships no types).
declare module 'autocannon' {
  export interface Histogram {
    readonly average: number;
    readonly p50: number;
    readonly p99: number;
    readonly total: number;
  }
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    requests?: Array<Request & { setupRequest?: (request: Request, context: Record<string, unknown>) => Request }>;
  }
  export interface Result {
    readonly requests: Histogram;
    readonly latency: Histogram;
    readonly duration: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly statusCodeStats: Record<string, { count: number }>;
  }
  /** A run: a promise of its result, and an emitter of its events ('response' carries the latency in ms, as a float). */
  export interface Instance extends PromiseLike<Result> {
    on(
      event: 'response',
      listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void,
    ): this;
  }
  function autocannon(options: Options): Instance;
  export default autocannon;
}
