import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WINDOWS } from '../matrix/index.js';
import { chainResolvers, imageOsFromName, imageOsResolver, staticResolver } from './image-os.js';
import { parseImageRef } from './image-ref.js';

test('image references split like the container runtimes do', () => {
  assert.deepEqual(parseImageRef('nginx'), {
    registry: 'docker.io',
    repository: 'library/nginx',
    tag: undefined,
    digest: undefined,
  });
  assert.deepEqual(parseImageRef('localhost:5000/team/app:1.2@sha256:ab'), {
    registry: 'localhost:5000',
    repository: 'team/app',
    tag: '1.2',
    digest: 'sha256:ab',
  });
  assert.equal(parseImageRef('index.docker.io/library/redis:7').repository, 'library/redis');
});

test('Windows images by name, with the build from the matrix', () => {
  const ltsc2022 = WINDOWS.find((w) => w.ltsc === 'ltsc2022')?.build;
  const ltsc2025 = WINDOWS.find((w) => w.ltsc === 'ltsc2025')?.build;
  const cases: [string, string | undefined][] = [
    ['mcr.microsoft.com/windows/servercore:ltsc2022', ltsc2022],
    ['mcr.microsoft.com/windows/nanoserver:ltsc2025', ltsc2025],
    ['mcr.microsoft.com/windows/server:ltsc2025', ltsc2025],
    ['mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019', '10.0.17763'],
    ['mcr.microsoft.com/windows/servercore:1809', '10.0.17763'],
    ['mcr.microsoft.com/windows/servercore:20H2', '10.0.19042'],
    ['mcr.microsoft.com/windows/nanoserver:10.0.20348.2762', '10.0.20348'],
    ['mcr.microsoft.com/windows/servercore', undefined],
    ['mcr.microsoft.com/dotnet/framework/aspnet:4.8', undefined],
    ['python:3.12-windowsservercore-ltsc2022', ltsc2022],
    ['mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022', ltsc2022],
    ['registry.example.com/mirror/windows/servercore:ltsc2022', ltsc2022],
    ['fluent/fluent-bit:3.2-windows-ltsc2022', ltsc2022],
    ['golang:1.23-nanoserver', undefined],
  ];
  for (const [image, build] of cases) {
    const os = imageOsFromName(image);
    assert.equal(os?.os, 'windows', image);
    assert.equal(os?.osVersion, build, image);
    assert.equal(os?.source, 'heuristic');
  }
});

test('classic Docker Hub Windows images and older Windows releases, with their builds', () => {
  const cases: [string, string | undefined][] = [
    ['microsoft/iis', undefined],
    ['microsoft/iis:windowsservercore-1803', '10.0.17134'],
    ['microsoft/windowsservercore:1709', '10.0.16299'],
    ['docker.io/microsoft/windowsservercore:ltsc2016', '10.0.14393'],
    ['microsoft/nanoserver:10.0.14393.2068', '10.0.14393'],
    ['microsoft/nanoserver:1903', '10.0.18362'],
    ['microsoft/aspnet:4.7.2-windowsservercore-1909', '10.0.18363'],
    ['microsoft/dotnet-framework:4.8-runtime', undefined],
    ['microsoft/mssql-server-windows-developer:2017', undefined],
    ['mcr.microsoft.com/windows/servercore:2004', '10.0.19041'],
    ['mcr.microsoft.com/windows/nanoserver:20H2', '10.0.19042'],
    ['python:3.7-windowsservercore-1709', '10.0.16299'],
  ];
  for (const [image, build] of cases) {
    const os = imageOsFromName(image);
    assert.equal(os?.os, 'windows', image);
    assert.equal(os?.osVersion, build, image);
  }
  // Other Docker Hub repositories of Microsoft publish Linux or multi-OS images.
  assert.equal(imageOsFromName('microsoft/dotnet:2.1-sdk'), undefined);
  assert.equal(imageOsFromName('registry.example.com/microsoft/iis:latest'), undefined);
});

test('Linux images by name; unknown stays unknown', () => {
  for (const image of [
    'nginx',
    'nginx:1.27',
    'docker.io/library/redis:7',
    'postgres:16-bookworm',
    'python:3.12-slim',
    'ghcr.io/x/y:1.0-alpine',
  ]) {
    assert.equal(imageOsFromName(image)?.os, 'linux', image);
  }
  // Multi-OS or opaque names: no guess. Bare 1809/2004 in a tag are not evidence.
  for (const image of [
    'python:3.12',
    'registry.k8s.io/pause:3.10.2',
    'registry.example.com/app:1.0',
    'myapp:2004',
    'app:v1.1809',
  ]) {
    assert.equal(imageOsFromName(image), undefined, image);
  }
});

test('resolvers chain in order and report their source', async () => {
  const registry = staticResolver({ 'example/app:1': { os: 'windows', osVersion: '10.0.26100' } }, 'registry');
  const cache = staticResolver({ 'example/app:1': { os: 'linux' }, 'example/other:2': { os: 'linux' } }, 'cache');
  const chain = chainResolvers(registry, cache);
  assert.deepEqual(await chain.resolve('example/app:1'), {
    os: 'windows',
    osVersion: '10.0.26100',
    source: 'registry',
  });
  assert.deepEqual(await chain.resolve('example/other:2'), { os: 'linux', source: 'cache' });
  assert.equal(await chain.resolve('example/none:3'), undefined);
  const offline = imageOsResolver({ offline: true, registry, cache });
  assert.deepEqual(await offline.resolve('example/app:1'), { os: 'linux', source: 'cache' });
  assert.equal((await imageOsResolver({ offline: false }).resolve('nginx'))?.source, 'heuristic');
});
