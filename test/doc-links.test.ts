// Every relative link in README.md and the docs resolves: the file exists, and
// an anchor (`page.md#section`) names a heading of that page as GitHub slugs it.
// Markdown is read by markdown-it (links inside code are not links) and
// headings are slugged by github-slugger, the algorithm GitHub itself uses.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import MarkdownIt from 'markdown-it';
import GithubSlugger from 'github-slugger';
import { repoPath } from './helpers/cli.js';

const md = new MarkdownIt({ html: true });

/** Markdown pages of the repository that readers follow links in. */
function pages(): string[] {
  const root = repoPath();
  const found = [join(root, 'README.md')];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) found.push(path);
    }
  };
  for (const dir of ['docs', 'gobuild']) if (existsSync(join(root, dir))) walk(join(root, dir));
  return found;
}

interface Link {
  readonly href: string;
  readonly line: number;
}

function linksOf(text: string): Link[] {
  const links: Link[] = [];
  const visit = (tokens: ReturnType<typeof md.parse>, line: number): void => {
    for (const t of tokens) {
      const at = t.map?.[0] ?? line;
      if (t.type === 'link_open') links.push({ href: String(t.attrGet('href') ?? ''), line: at + 1 });
      if (t.type === 'image') links.push({ href: String(t.attrGet('src') ?? ''), line: at + 1 });
      if (t.children) visit(t.children, at);
    }
  };
  visit(md.parse(text, {}), 0);
  return links;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors === undefined) {
    const slugger = new GithubSlugger();
    const tokens = md.parse(readFileSync(file, 'utf8'), {});
    anchors = new Set<string>();
    tokens.forEach((t, i) => {
      if (t.type !== 'heading_open') return;
      const inline = tokens[i + 1];
      const text = (inline?.children ?? [])
        .filter((c) => c.type === 'text' || c.type === 'code_inline')
        .map((c) => c.content)
        .join('');
      anchors?.add(slugger.slug(text));
    });
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/** What is wrong with one relative link, or undefined when it resolves. */
function brokenReason(page: string, href: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return undefined; // https:, mailto: …
  const [path = '', anchor] = href.split('#', 2);
  const target = path === '' ? page : join(dirname(page), decodeURIComponent(path));
  if (!existsSync(target)) return `no such file ${relative(repoPath(), target)}`;
  if (anchor === undefined || anchor === '' || !target.endsWith('.md')) return undefined;
  return anchorsOf(target).has(anchor) ? undefined : `no heading #${anchor} in ${relative(repoPath(), target)}`;
}

describe('relative links in README and docs', () => {
  for (const page of pages()) {
    it(relative(repoPath(), page), () => {
      const broken = linksOf(readFileSync(page, 'utf8'))
        .map((l) => ({ l, why: brokenReason(page, l.href) }))
        .filter((x) => x.why !== undefined)
        .map((x) => `line ${x.l.line}: (${x.l.href}) ${x.why}`);
      assert.deepEqual(broken, [], `broken links in ${relative(repoPath(), page)}`);
    });
  }

  it('finds a broken link when there is one (the checker itself)', () => {
    const page = repoPath('README.md');
    assert.equal(brokenReason(page, 'docs/no-such-page.md'), 'no such file docs/no-such-page.md');
    assert.match(brokenReason(page, 'docs/commands.md#no-such-heading') ?? '', /no heading #no-such-heading/);
    assert.equal(brokenReason(page, 'https://example.com/x'), undefined);
  });
});
