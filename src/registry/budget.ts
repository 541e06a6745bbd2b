// A registry lookup with a time limit of its own, for callers that must answer
// sooner than a registry may: the admission webhook has 9 s per decision, a
// registry request up to --registry-timeout (10 s by default), and a registry
// that never answers (an air-gapped cluster, a firewall that drops) would turn
// every decision into a 503 — with failurePolicy Fail, a refused pod. Past the
// limit the resolver says "unknown", so the chain goes on to the cache and the
// name heuristics; the lookup itself goes on and fills the cache when it ends.
// While a lookup is overdue, later ones are not waited for at all: a decision
// with several images pays the limit once, not once per image.
import type { ImageOsResolver } from '../lint/image-os.js';
import { RegistryError } from './errors.js';

export function withinBudget(
  resolver: ImageOsResolver,
  budgetMs: number,
  warn: (message: string, error: RegistryError) => void,
): ImageOsResolver {
  let overdue = 0;
  const giveUp = (image: string, why: string): undefined => {
    const message = `${image}: ${why}; the cache or the image name decides`;
    warn(message, new RegistryError('registry.slow', message));
    return undefined;
  };
  return {
    resolve(image) {
      if (overdue > 0) return Promise.resolve(giveUp(image, 'a registry lookup is overdue'));
      let timer: NodeJS.Timeout | undefined;
      let late = false;
      const answer = resolver.resolve(image);
      const limit = new Promise<undefined>((done) => {
        timer = setTimeout(() => {
          late = true;
          overdue += 1;
          done(giveUp(image, `no registry answer within ${budgetMs / 1000} s`));
        }, budgetMs);
      });
      // The lookup runs to its end whoever waits for it (it fills the cache); never an unhandled rejection.
      void answer
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          clearTimeout(timer);
          if (late) overdue -= 1;
        });
      return Promise.race([answer, limit]);
    },
  };
}
