// Counters and a latency histogram, rendered in the Prometheus text format
// (version 0.0.4). Owned by one server instance, never global.

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export class Metrics {
  readonly #requests = new Map<string, number>();
  readonly #buckets = new Map<string, number[]>();
  readonly #sums = new Map<string, number>();

  /** `code` is the HTTP status the client got, or `aborted` when it got none. */
  observe(route: string, code: number | 'aborted', seconds: number): void {
    const key = `route="${route}",code="${code}"`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    const counts = this.#buckets.get(route) ?? BUCKETS.map(() => 0);
    BUCKETS.forEach((le, i) => {
      if (seconds <= le) counts[i] = (counts[i] ?? 0) + 1;
    });
    this.#buckets.set(route, counts);
    this.#sums.set(route, (this.#sums.get(route) ?? 0) + seconds);
  }

  render(): string {
    const lines = [
      '# HELP kubemix_guard_requests_total Admission and probe requests by route and HTTP status.',
      '# TYPE kubemix_guard_requests_total counter',
      ...[...this.#requests].sort().map(([k, v]) => `kubemix_guard_requests_total{${k}} ${v}`),
      '# HELP kubemix_guard_request_duration_seconds Time to answer a request.',
      '# TYPE kubemix_guard_request_duration_seconds histogram',
    ];
    for (const [route, counts] of [...this.#buckets].sort()) {
      const total = [...this.#requests]
        .filter(([k]) => k.startsWith(`route="${route}"`))
        .reduce((n, [, v]) => n + v, 0);
      BUCKETS.forEach((le, i) =>
        lines.push(`kubemix_guard_request_duration_seconds_bucket{route="${route}",le="${le}"} ${counts[i] ?? 0}`),
      );
      lines.push(`kubemix_guard_request_duration_seconds_bucket{route="${route}",le="+Inf"} ${total}`);
      lines.push(`kubemix_guard_request_duration_seconds_sum{route="${route}"} ${this.#sums.get(route) ?? 0}`);
      lines.push(`kubemix_guard_request_duration_seconds_count{route="${route}"} ${total}`);
    }
    return `${lines.join('\n')}\n`;
  }
}
