#!/usr/bin/python3
"""Docs that are tested: runs the command blocks of README.md and docs/*.md.

    test_docs.py SRCDIR BUILDDIR --check          static checks of every doc
    test_docs.py SRCDIR BUILDDIR FILE.md [...]    run FILE's command blocks

The convention (README.md, "Docs are tested"):

- A fenced block opened with ```sh or ```bash is run by this test with `bash -e`, from a
  scratch copy of the repository root in which `build` is the build directory under test
  (symlinks to the sources, so files a block writes stay in the scratch directory), with
  HOME in that directory. It must exit 0. As root, the blocks of a run have a /run and a
  network of their own (isolate()).
- When the next fenced block after it is opened with ```output, the block's output (stdout
  and stderr together) must match it: a line `...` matches any number of lines (none too),
  `<...>` inside a line matches any text within that line; trailing blanks are ignored.
  Lines of the poll watchdog (`PROGRAM: poll watchdog: ...`) are left out of the output
  first: they report that the host kept the process off its CPU, which no doc can foresee.
- The line right before the fence may say how:
    <!-- not-tested: REASON -->   not run (needs a NIC, another host, hours, host changes)
    <!-- doc-test: OPTIONS -->    run with OPTIONS: `netns` (needs root and network
                                  namespaces: skipped with a message where they are not
                                  available), `root` (skipped when not root),
                                  `timeout=SEC` (default 120)
- Blocks of one file run in order in one scratch directory, after the commands of any
  `<!-- doc-test-setup: COMMANDS -->` line of the file.
- A plain ``` (or ```text) block must not hold commands (lines starting `$ ` or
  `./build/`): those are ```sh blocks. A command block names binaries as
  `./build/app/htoe-...`, never a bare `htoe-...` (they are not on the PATH).
- No doc may refer to anything outside the repository: no `shared/` path, no `../` that
  leaves the repository, and every relative link and every repository path in backquotes
  (`app/...`, `config/...`, `docs/...`, `lib/...`, `pcap/...`, `scripts/...`, `tests/...`,
  `tools/...`) must exist.

Exit status: 0 all passed (skips allowed), 1 a failure, 2 usage.
"""

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r'^(\s*)(```+|~~~+)\s*([^\s`]*)(.*)$')
MARK_NOT = re.compile(r'^\s*<!--\s*not-tested:\s*(\S.*?)\s*-->\s*$')
MARK_RUN = re.compile(r'^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$')
MARK_SETUP = re.compile(r'^\s*<!--\s*doc-test-setup:\s*(.*?)\s*-->\s*$')
RUN_LANGS = ('sh', 'bash')
TOP_DIRS = ('app', 'config', 'docs', 'lib', 'pcap', 'scripts', 'tests', 'tools')
DEFAULT_TIMEOUT = 120


class Block:
    def __init__(self, path, line, lang, body, indent, prev):
        self.path, self.line, self.lang, self.body = path, line, lang, body
        self.indent, self.prev = indent, prev
        self.output = None          # the ```output block that follows, if any

    def where(self):
        return f'{self.path}:{self.line}'


def parse(path, text):
    """Fenced blocks of a markdown file, with the line before each fence."""
    lines = text.split('\n')
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        j = i + 1
        while j < len(lines) and not re.fullmatch(r'\s*' + re.escape(fence[0]) + '{%d,}\s*'
                                                  % len(fence), lines[j]):
            j += 1
        body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1:j]]
        prev = lines[i - 1] if i > 0 else ''
        blocks.append(Block(path, i + 1, lang, body, indent, prev))
        i = j + 1
    for k, b in enumerate(blocks):
        if b.lang in RUN_LANGS and k + 1 < len(blocks) and blocks[k + 1].lang == 'output':
            b.output = blocks[k + 1]
    return blocks


def doc_files(src):
    return ['README.md'] + sorted(os.path.relpath(p, src)
                                  for p in glob.glob(os.path.join(src, 'docs', '*.md')))


# ---------------------------------------------------------------- static checks

CODE_SPAN = re.compile(r'`([^`\n]+)`')
MD_LINK = re.compile(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
PATHLIKE = re.compile(r'^(?:\./)?((?:%s)/[A-Za-z0-9_.*\[\]{},/+-]*)$' % '|'.join(TOP_DIRS))
COMMAND_LINE = re.compile(r'^\s*(?:sudo\s+)?(?:meson|ninja|bash|sh|tshark|install|ip|wireshark|'
                          r'mergecap|python3|/usr/bin/python3|cd|git|cat|printf|echo|seq|'
                          r'dpdk-[a-z-]+\.py|htoe-(?:bridge|dimm|sim|ht|pcap|bench))\s')
# (a systemd unit such as htoe-bridge@NAME is not a program)
BARE_BIN = re.compile(r'()(?<![\w/.-])(htoe-(?:bridge|dimm|sim|ht|pcap|bench))(?![\w.:/@-])')


def path_exists(src, rel):
    """rel exists in the repository: a file, a directory, or a pattern like x.[ch], x_*.c."""
    rel = rel.rstrip('/').rstrip('.,;:')
    if not rel:
        return True
    if os.path.exists(os.path.join(src, rel)):
        return True
    if glob.glob(glob.escape(os.path.join(src, rel)) + '.*'):
        return True                 # a program or object named after its source: app/htoe-sim
    pat = rel
    if any(c in pat for c in '*[{'):
        pat = re.sub(r'\{([^}]*)\}', lambda m: '[' + m.group(1).replace(',', '') + ']', pat)
        return bool(glob.glob(os.path.join(src, pat)))
    return False


def check_static(src, path, text, blocks):
    errors = []
    rel_dir = os.path.dirname(path)
    lines = text.split('\n')
    in_block = set()
    for b in blocks:
        in_block.update(range(b.line, b.line + len(b.body) + 2))
    for n, line in enumerate(lines, 1):
        if re.search(r'(^|[^A-Za-z0-9_])shared/', line):
            errors.append(f'{path}:{n}: refers to shared/, outside the repository: state the '
                          f'facts in the doc instead')
        for m in MD_LINK.finditer(line):
            target = m.group(1)
            if re.match(r'^[a-z]+:', target) or target.startswith('#'):
                continue
            target = target.split('#')[0]
            full = os.path.abspath(os.path.join(src, rel_dir, target))
            if not (full + os.sep).startswith(os.path.abspath(src) + os.sep):
                errors.append(f'{path}:{n}: link {target} leaves the repository')
            elif not os.path.exists(full):
                errors.append(f'{path}:{n}: link {target}: no such file in the repository')
        if '../' in MD_LINK.sub('', line):
            errors.append(f'{path}:{n}: `../` outside a link: name repository paths from the '
                          f'repository root')
        if n in in_block:
            continue
        for m in CODE_SPAN.finditer(line):
            span = m.group(1).strip()
            pm = PATHLIKE.match(span)
            if pm and not path_exists(src, pm.group(1)):
                errors.append(f'{path}:{n}: `{span}`: no such path in the repository')
    for b in blocks:
        for i, l in enumerate(b.body):
            if re.match(r'\s*(```|~~~)\s*\S', l):
                errors.append(f'{b.where()}+{i + 1}: a fence with an info string inside a '
                              f'block: a closing fence is missing above it')
                break
    for k, b in enumerate(blocks):
        runnable = b.lang in RUN_LANGS
        not_tested = MARK_NOT.match(b.prev)
        if b.prev.strip().startswith('<!--') and not (not_tested or MARK_RUN.match(b.prev)) \
                and 'not-tested' in b.prev:
            errors.append(f'{b.where()}: malformed marker {b.prev.strip()!r}: '
                          f'use <!-- not-tested: REASON -->')
        run_mark = MARK_RUN.match(b.prev)
        if run_mark:
            for o in run_mark.group(1).split():
                if o not in ('netns', 'root') and not re.fullmatch(r'timeout=\d+', o):
                    errors.append(f'{b.where()}: unknown doc-test option {o!r} '
                                  f'(netns, root, timeout=SEC)')
            if not runnable:
                errors.append(f'{b.where()}: doc-test options before a ```{b.lang} block')
        if not runnable:
            if b.lang in ('', 'text', 'console', 'shell'):
                for i, l in enumerate(b.body):
                    if l.startswith('$ ') or l.startswith('./build/') or \
                            (b.lang != 'text' and COMMAND_LINE.match(l)):
                        errors.append(f'{b.where()}: a command ({l.strip()[:50]!r}) in a '
                                      f'```{b.lang or "(plain)"} block: make it a ```sh block '
                                      f'(with its output in a following ```output block), or '
                                      f'mark it <!-- not-tested: REASON -->')
                        break
                if b.lang in ('console', 'shell'):
                    errors.append(f'{b.where()}: ```{b.lang}: use ```sh for commands, '
                                  f'```text for anything else')
            if b.lang == 'output' and (k == 0 or blocks[k - 1].lang not in RUN_LANGS):
                errors.append(f'{b.where()}: an ```output block must follow a ```sh block')
            continue
        if not not_tested and any(re.search(r'\bmeson\s+test\b', l) for l in b.body):
            errors.append(f'{b.where()}: runs meson test: the doc test itself runs under meson '
                          f'test (whose log it would overwrite); mark it <!-- not-tested: ... -->')
        for i, l in enumerate(b.body):
            code = l.split('#', 1)[0] if not l.lstrip().startswith('#') else ''
            bm = BARE_BIN.search(code)
            if bm:
                errors.append(f'{b.where()}+{i + 1}: bare `{bm.group(2)}` is not on the PATH: '
                              f'run ./build/app/{bm.group(2)}')
    return errors


# A reference to where a request came from ("session" or "issue" with a number) means
# nothing to a reader of the repository: a doc or a comment states the reason instead.
# The pattern is assembled so that this file does not match it.
ORIGIN_REF = re.compile(r'\b(?:sess' + r'ions?[ -]?#?[0-9]|iss' + r'ues? #?[0-9])', re.I)
SKIP_DIRS = ('.git',)


def check_origin_refs(src):
    """Every text file of the repository (build directories aside): no ORIGIN_REF."""
    errors = []
    for root, dirs, files in os.walk(src):
        rel_root = os.path.relpath(root, src)
        dirs[:] = sorted(d for d in dirs if not (rel_root == '.' and (
            d.startswith('build') or d in SKIP_DIRS)) and d not in SKIP_DIRS)
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                with open(path, encoding='utf-8') as fh:
                    text = fh.read()
            except (UnicodeDecodeError, OSError):
                continue                    # binary: pcaps, plots
            for n, line in enumerate(text.split('\n'), 1):
                m = ORIGIN_REF.search(line)
                if m:
                    errors.append(f'{os.path.relpath(path, src)}:{n}: "{m.group(0)}...": say '
                                  f'why, not which session or issue asked for it')
    return errors


RESULTS_MARK = re.compile(r'<!-- results: begin \(made by scripts/bench_table\.py from (\S+);')


def check_results_tables(src, path, text):
    """A doc's results table is what scripts/bench_table.py makes from its JSON."""
    m = RESULTS_MARK.search(text)
    if not m:
        return []
    sys.path.insert(0, os.path.join(src, 'scripts'))
    import bench_table
    sys.path.pop(0)
    json_path = os.path.join(src, m.group(1))
    if not os.path.exists(json_path):
        return [f'{path}: its results table names {m.group(1)}, which does not exist']
    import json
    with open(json_path, encoding='utf-8') as fh:
        want = bench_table.splice(text, bench_table.tables(json.load(fh)), m.group(1))
    if want != text:
        return [f'{path}: its results table is not what {m.group(1)} makes: run '
                f'scripts/bench_table.py {m.group(1)} --write {path}']
    return []


# The two docs that carry a results table stay reference, not a log of how figures moved:
# a length each may not outgrow, and no heading dated like a notebook entry.
MAX_LINES = {'docs/benchmarks.md': 400, 'docs/dimm.md': 600}
DATED_HEADING = re.compile(r'^#+ .*\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b')


def check_notebook(path, text):
    errors = []
    lines = text.split('\n')
    if text.endswith('\n'):
        lines.pop()
    limit = MAX_LINES.get(path)
    if limit is not None and len(lines) > limit:
        errors.append(f'{path}: {len(lines)} lines, more than {limit}: say how it works now, '
                      f'and leave how the figures moved to the commit messages')
    for n, line in enumerate(lines, 1):
        if DATED_HEADING.match(line):
            errors.append(f'{path}:{n}: a dated heading: one current table, not a log')
    return errors


# ---------------------------------------------------------------- running blocks

def line_regex(pat):
    parts = pat.split('<...>')
    return re.compile('.*?'.join(re.escape(p) for p in parts) + r'\Z', re.S)


# A poll watchdog's report (app/bridge/stall.c): the host starved a poller.
WATCHDOG_LINE = re.compile(r'[\w.-]+: poll watchdog: ')


def match_output(expected, actual):
    """DP match: expected lines with `...` (any lines) and `<...>` (any text in a line)."""
    exp = [l.rstrip() for l in expected]
    act = [l.rstrip() for l in actual if not WATCHDOG_LINE.match(l)]
    while exp and not exp[-1]:
        exp.pop()
    while act and not act[-1]:
        act.pop()
    rx = [None if l.strip() == '...' else line_regex(l) for l in exp]
    n, m = len(exp), len(act)
    # ok[i][j]: exp[i:] matches act[j:]
    ok = [[False] * (m + 1) for _ in range(n + 1)]
    ok[n][m] = True
    for i in range(n - 1, -1, -1):
        for j in range(m, -1, -1):
            if rx[i] is None:
                ok[i][j] = ok[i + 1][j] or (j < m and ok[i][j + 1])
            else:
                ok[i][j] = j < m and bool(rx[i].match(act[j])) and ok[i + 1][j + 1]
    if ok[0][0]:
        return None
    # the longest prefix of the expectation that matches somewhere: report the line after it
    best = 0
    reach = {0}
    for i in range(n):
        nxt = set()
        for j in reach:
            if rx[i] is None:
                nxt.update(range(j, m + 1))
            elif j < m and rx[i].match(act[j]):
                nxt.add(j + 1)
        if not nxt:
            break
        reach, best = nxt, i + 1
    if best < n:
        return f'expected line {best + 1} not found: {exp[best]!r}'
    return f'unexpected output after the expected lines'


ISOLATED = 'HTOE_DOCTEST_ISOLATED'


def isolate(argv):
    """As root, the blocks run with a /run and a network of their own (a mount and a network
    namespace, unshare(1)): two runs of one doc at once on a host (two checkouts' suites) then
    share no socket path under /run, no DPDK runtime directory (/var/run/dpdk), no TCP port, no
    namespace or interface name. Re-executes this script inside them (the same process, so a
    timeout still reaches it); where they cannot be made, the blocks run on the host's."""
    if os.environ.get(ISOLATED) == '1':
        for cmd in (['mount', '-t', 'tmpfs', '-o', 'mode=755', 'htoe-doctest', '/run'],
                    ['ip', 'link', 'set', 'lo', 'up']):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f'FAIL: in the namespaces of the docs: {" ".join(cmd)}: {r.stderr.strip()}')
                sys.exit(1)
        return
    if os.geteuid() != 0 or not shutil.which('unshare') or subprocess.run(
            ['unshare', '--mount', '--net', 'true'], capture_output=True).returncode != 0:
        return
    os.environ[ISOLATED] = '1'
    os.execvp('unshare', ['unshare', '--mount', '--net', '--propagation', 'private', '--',
                          sys.executable] + argv)


def netns_available():
    if os.geteuid() != 0 or not shutil.which('ip'):
        return 'not root'
    name = f'htoe-doctest-{os.getpid()}'
    r = subprocess.run(['ip', 'netns', 'add', name], capture_output=True, text=True)
    if r.returncode != 0:
        return r.stderr.strip() or 'ip netns add failed'
    subprocess.run(['ip', 'netns', 'del', name], capture_output=True)
    return None


def make_scratch(src, build, tmp):
    root = os.path.join(tmp, 'repo')
    os.makedirs(os.path.join(root, 'home'))
    for e in os.listdir(src):
        if e in ('build', '.git') or e.startswith('build-') or e == 'home':
            continue
        os.symlink(os.path.join(src, e), os.path.join(root, e))
    os.symlink(build, os.path.join(root, 'build'))
    return root


def kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def run_block(script, root, env, timeout):
    """bash -e SCRIPT in its own process group; output to a file (a background job that keeps
    it open cannot hang the test); whatever the block left running is stopped afterwards."""
    with tempfile.TemporaryFile() as f:
        p = subprocess.Popen(['bash', '-e', '-c', script], cwd=root, env=env,
                             stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = f'timeout after {timeout} s'
        kill_group(p.pid, signal.SIGINT)
        for _ in range(50):
            if not kill_group(p.pid, 0):
                break
            time.sleep(0.1)
        kill_group(p.pid, signal.SIGKILL)
        # until the group is gone: a DPDK process still dying holds its --file-prefix, and
        # the next block's process of the same prefix would be refused
        for _ in range(300):
            if not kill_group(p.pid, 0):
                break
            time.sleep(0.1)
        if not isinstance(rc, int):
            p.wait()
        f.seek(0)
        return f.read().decode('utf-8', 'replace'), rc


def print_logs(root, since):
    """The end of each log a failed block wrote in the scratch directory (its processes'
    summaries say why it failed; the directory is gone once the test ends)."""
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if not name.endswith('.log') or os.path.islink(path) or not os.path.isfile(path):
            continue
        if os.path.getmtime(path) < since:
            continue
        with open(path, encoding='utf-8', errors='replace') as fh:
            lines = fh.read().rstrip('\n').split('\n')
        print(f'--- {name} (last {min(len(lines), 40)} of {len(lines)} lines):')
        print('\n'.join(lines[-40:]))


def run_file(src, build, path, netns_why):
    text = open(os.path.join(src, path), encoding='utf-8').read()
    blocks = parse(path, text)
    setup = [MARK_SETUP.match(l).group(1) for l in text.split('\n') if MARK_SETUP.match(l)]
    failed = passed = skipped = marked = 0
    with tempfile.TemporaryDirectory(prefix='htoe-doctest-') as tmp:
        root = make_scratch(src, build, tmp)
        env = dict(os.environ)
        for k in list(env):
            if k.startswith('MESON') or k in ('MALLOC_PERTURB_', ISOLATED):
                del env[k]
        env.update(HOME=os.path.join(root, 'home'), LC_ALL='C.UTF-8', LANG='C.UTF-8',
                   TERM='dumb', COLUMNS='200')
        if setup:
            r = subprocess.run(['bash', '-e', '-c', '\n'.join(setup)], cwd=root, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                print(f'FAIL {path}: doc-test-setup exited {r.returncode}:\n{r.stdout}')
                return 1, 0, 0, 0
        for b in blocks:
            if b.lang not in RUN_LANGS:
                continue
            if MARK_NOT.match(b.prev):
                marked += 1
                print(f'not tested {b.where()}: {MARK_NOT.match(b.prev).group(1)}')
                continue
            opts = MARK_RUN.match(b.prev).group(1).split() if MARK_RUN.match(b.prev) else []
            timeout = DEFAULT_TIMEOUT
            for o in opts:
                if o.startswith('timeout='):
                    timeout = int(o.split('=', 1)[1])
            if 'root' in opts and os.geteuid() != 0:
                skipped += 1
                print(f'SKIP {b.where()}: needs root')
                continue
            if 'netns' in opts and netns_why:
                skipped += 1
                print(f'SKIP {b.where()}: needs network namespaces ({netns_why})')
                continue
            script = '\n'.join(b.body) + '\n'
            t0 = time.time()
            out, rc = run_block(script, root, env, timeout)
            why = None
            if rc != 0:
                why = f'exit status {rc}'
            elif b.output is not None:
                why = match_output(b.output.body, out.split('\n'))
            if why:
                failed += 1
                # the output first: a log shown cut short still says what happened
                print(f'FAIL {b.where()}: {why}')
                print('--- output:\n' + out.rstrip())
                if b.output is not None:
                    print(f'--- expected ({b.output.where()}):\n' + '\n'.join(b.output.body))
                print('--- block:\n' + script.rstrip() + '\n---')
                print_logs(root, t0)
            else:
                passed += 1
                print(f'ok {b.where()}' + (' (output matched)' if b.output else ''))
    return failed, passed, skipped, marked


def self_test(src):
    """The checker checks: each rule is shown a doc that breaks it."""
    problems = []
    cases = [
        ('```sh\nhtoe-bridge -l 0\n```\n', 'bare `htoe-bridge`'),
        ('```sh\nip netns exec a htoe-dimm -l 0\n```\n', 'bare `htoe-dimm`'),
        ('```\n$ ./build/app/htoe-ht decode x\n```\n', 'a command'),
        ('```\nmeson test -C build\n```\n', 'a command'),
        ('see `../shared/reference/x.md`\n', 'shared/'),
        ('see [x](../../x.md)\n', 'leaves the repository'),
        ('see [x](nothere.md)\n', 'no such file'),
        ('see `lib/htoe/nothere.c`\n', 'no such path'),
        ('```output\nx\n```\n', 'must follow a ```sh block'),
        ('<!-- not-tested -->\n```sh\ntrue\n```\n', 'malformed marker'),
        ('<!-- doc-test: netsn -->\n```sh\ntrue\n```\n', 'unknown doc-test option'),
        ('```sh\ntrue\n\n```sh\ntrue\n```\n', 'closing fence is missing'),
    ]
    for text, want in cases:
        errs = check_static(src, 'docs/x.md', text, parse('docs/x.md', text))
        if not any(want in e for e in errs):
            problems.append(f'self-test: {text!r} should give {want!r}, gave {errs}')
    good = ('<!-- not-tested: a NIC -->\n```sh\n./build/app/htoe-bridge -a 0000:03:00.0\n```\n'
            '```text\nhtoe-bridge EAL-ARGS -- [options]\n```\n'
            'see [bridge](bridge.md) and `lib/htoe/htoe_wire.[ch]`, `app/htoe-sim`\n')
    errs = check_static(src, 'docs/x.md', good, parse('docs/x.md', good))
    if errs:
        problems.append(f'self-test: a good doc gave {errs}')
    iss, ses = 'iss' + 'ue', 'sess' + 'ion'
    for line, bad in [(f'a fix ({iss} 13)', True), (f'{iss.capitalize()} 5: x', True),
                      (f'{iss}s 4, 5 and 11', True), (f'{iss} #12', True),
                      (f'{ses.capitalize()} 9 found', True), (f'{ses}s 8-12', True),
                      (f'{ses}-12', True), (f'the {ses} nonce 0x65', False),
                      (f'a t{iss} 3', False), (f'{iss}s of the design', False)]:
        if bool(ORIGIN_REF.search(line)) != bad:
            problems.append(f'self-test: {line!r} should {"" if bad else "not "}be refused')
    for exp, act, ok in [(['a <...> c', '...', 'z'], ['a b c', 'x', 'y', 'z'], True),
                         (['a <...> c', '...', 'z'], ['a b c', 'z'], True),
                         (['...'], [], True),
                         (['a <...> c'], ['a b d'], False),
                         (['a'], ['a', 'b'], False),
                         (['a', 'b'], ['a'], False),
                         (['x<...>'], ['x1', ''], True),
                         (['a', 'b'], ['a', 'htoe-bridge: poll watchdog: lcore 0 (node 2): x', 'b'],
                          True)]:
        if (match_output(exp, act) is None) != ok:
            problems.append(f'self-test: {exp} vs {act} should {"" if ok else "not "}match')
    return problems


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, build = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    if argv[3] == '--check':
        errors = self_test(src) + check_origin_refs(src)
        for path in doc_files(src):
            text = open(os.path.join(src, path), encoding='utf-8').read()
            errors += check_static(src, path, text, parse(path, text))
            errors += check_results_tables(src, path, text)
            errors += check_notebook(path, text)
        mb = open(os.path.join(src, 'tests', 'meson.build'), encoding='utf-8').read()
        for path in doc_files(src):
            if f"'{path}'" not in mb:
                errors.append(f'{path}: not in doc_files of tests/meson.build: add it')
        for e in errors:
            print(e)
        print(f'docs: {len(doc_files(src))} files checked, {len(errors)} problems')
        return 1 if errors else 0
    isolate(argv)
    netns_why = netns_available()
    totals = [0, 0, 0, 0]
    for path in argv[3:]:
        t = run_file(src, build, path, netns_why)
        totals = [a + b for a, b in zip(totals, t)]
    failed, passed, skipped, marked = totals
    print(f'docs: {passed} blocks passed, {failed} failed, {skipped} skipped, '
          f'{marked} marked not-tested')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
