import { error, type Rule } from './context.js';

const REGISTRY_HOST = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:\d{1,5})?$/;

/** Mirror keys are the registries they stand in for (`registry.k8s.io`), not URLs. */
export const mirrorKeys: Rule = (ctx) =>
  Object.keys(ctx.spec.mirrors.images)
    .filter((key) => !REGISTRY_HOST.test(key))
    .map((key) =>
      error(
        'mirrors.registry',
        `spec.mirrors.images.${key}`,
        `"${key}" is not a registry host name`,
        'write the registry as a host name, such as registry.k8s.io or ghcr.io',
      ),
    );
