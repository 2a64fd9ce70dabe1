/** A burst of `burst` at once, then `perSecond`: how the caller-facing gates bound what a tool sends. */
export class TokenBucket {
  #tokens: number;
  #at = performance.now();

  constructor(
    readonly burst: number,
    readonly perSecond: number,
  ) {
    this.#tokens = burst;
  }

  /** Takes a token if one is there. */
  take(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Milliseconds until the next token. */
  wait(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : Math.ceil(((1 - this.#tokens) * 1000) / this.perSecond);
  }

  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) * this.perSecond) / 1000);
    this.#at = now;
  }
}
