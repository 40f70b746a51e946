/**
 * The links of the Markdown pages (README.md, CONTRIBUTING.md, docs/*.md): relative links must
 * name a file below the same root and, with a `#hash`, a heading of that file (GitHub's anchors);
 * absolute links into the project's own repository (`<repository>/blob/main/<path>` or
 * `/tree/main/<path>`) must name a path the repository has. Used by test/docs-links.test.ts on the
 * clone and by scripts/package-links.ts on the installed package (the consumer test), where only
 * the shipped files exist. Reads nothing outside the root it is given.
 */
import * as fs from 'fs';
import * as path from 'path';

/** The repository of package.json (`https://github.com/owner/name`), without `.git`. */
export function repositoryUrl(root: string): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const url: string = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url ?? '';
  return url.replace(/^git\+/, '').replace(/\.git$/, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as '-'. */
export function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function withoutCode(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

function anchorsOf(root: string, file: string): Set<string> {
  const text = withoutCode(fs.readFileSync(path.join(root, file), 'utf8'));
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map(m => anchor(m[1])));
}

/** Every link target of one page: [text](target) outside code blocks. */
export function linksOf(root: string, file: string): string[] {
  const text = withoutCode(fs.readFileSync(path.join(root, file), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map(m => m[1]);
}

export interface DeadLinkOptions {
  /**
   * A checkout of the repository (the clone), where links into the repository are looked up
   * (path and heading); without it they are not checked (the installed package cannot see the
   * repository).
   */
  readonly repositoryRoot?: string;
}

/** The dead links of `file` (relative to `root`), each with the reason; empty when all resolve. */
export function deadLinks(root: string, file: string, options: DeadLinkOptions = {}): string[] {
  const repo = repositoryUrl(root);
  const dead: string[] = [];
  for (const link of linksOf(root, file)) {
    const [target, hash] = link.split('#');
    const inRepo = repo === '' ? null : new RegExp(`^${repo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(blob|tree)/main/(.+?)/?$`).exec(target);
    if (inRepo) {
      const where = options.repositoryRoot;
      if (where === undefined) continue;
      if (!fs.existsSync(path.join(where, inRepo[2]))) {
        dead.push(`${link} (the repository has no ${inRepo[2]})`);
      } else if (hash !== undefined && inRepo[2].endsWith('.md') && !anchorsOf(where, inRepo[2]).has(hash)) {
        dead.push(`${link} (no heading #${hash} in ${inRepo[2]})`);
      }
      continue;
    }
    if (/^(https?:|mailto:)/.test(target)) continue;
    const resolved = target === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
    if (resolved.startsWith('../') || !fs.existsSync(path.join(root, resolved))) {
      dead.push(`${link} (no file ${resolved})`);
    } else if (hash !== undefined && resolved.endsWith('.md') && !anchorsOf(root, resolved).has(hash)) {
      dead.push(`${link} (no heading #${hash} in ${resolved})`);
    }
  }
  return dead;
}
