import { setImmediate as nextTurn } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { GroupCommit, type GroupCommitOptions } from '../../src/storage/group-commit.js'
import { databaseUnavailable } from '../../src/storage/unreachable-database.js'

/** A database stand-in: records each commit's items; a commit ends when the test says so. */
function fakeDatabase(failWhen: (items: string[]) => boolean = () => false) {
  const commits: string[][] = []
  const committed: string[] = []
  const open: (() => void)[] = []
  let held = false
  const commit = async (items: string[]) => {
    commits.push(items)
    if (held) await new Promise<void>((release) => open.push(release))
    if (failWhen(items)) throw new Error(`failed: ${items.join(',')}`)
    committed.push(...items)
  }
  return {
    commit,
    commits,
    committed,
    /** Commits wait for `release` from now on. */
    hold: () => void (held = true),
    release: () => {
      held = false
      for (const end of open.splice(0)) end()
    },
  }
}

const full = () => new Error('full')
const groupCommit = (options: Partial<GroupCommitOptions<string>> & Pick<GroupCommitOptions<string>, 'commit'>) =>
  new GroupCommit<string>({ maxQueued: 1_000, whenFull: full, ...options })

describe('group commit', () => {
  it('commits the items of one event-loop turn together, in submission order, when it gathers the turn', async () => {
    const db = fakeDatabase()
    const commits = groupCommit({ commit: db.commit, gatherTurn: true })
    await Promise.all(['a', 'b', 'c', 'd'].map((item) => commits.submit(item, 1)))
    expect(db.commits).toEqual([['a', 'b', 'c', 'd']])
  })

  it('without gathering, commits the first item at once and the items that arrive meanwhile as one group', async () => {
    const db = fakeDatabase()
    const commits = groupCommit({ commit: db.commit })
    await Promise.all(['a', 'b', 'c'].map((item) => commits.submit(item, 1)))
    expect(db.commits).toEqual([['a'], ['b', 'c']])
  })

  it('resolves a submission only once its commit has ended', async () => {
    const db = fakeDatabase()
    const commits = groupCommit({ commit: db.commit })
    db.hold()
    let resolved = false
    const done = commits.submit('a', 1).then(() => (resolved = true))
    await nextTurn()
    expect(db.commits).toEqual([['a']])
    expect(resolved).toBe(false)
    db.release()
    await done
    expect(db.committed).toEqual(['a'])
  })

  it('commits at most maxGroup items at once', async () => {
    const db = fakeDatabase()
    const commits = groupCommit({ commit: db.commit, gatherTurn: true, maxGroup: 3 })
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((item) => commits.submit(item, 1)))
    expect(db.commits).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ])
  })

  it('runs up to `writers` commits at once', async () => {
    const db = fakeDatabase()
    const commits = groupCommit({ commit: db.commit, writers: 2 })
    db.hold()
    const writes = ['a', 'b', 'c'].map((item) => commits.submit(item, 1))
    await nextTurn()
    expect(db.commits).toEqual([['a'], ['b']])
    db.release()
    await nextTurn()
    db.release()
    await Promise.all(writes)
    expect(db.commits).toEqual([['a'], ['b'], ['c']])
  })

  it('rejects every submission of a group that cannot be committed, and commits the next group', async () => {
    const db = fakeDatabase((items) => items.some((item) => item.startsWith('down')))
    const commits = groupCommit({ commit: db.commit, gatherTurn: true })
    const failing = await Promise.allSettled(['down-1', 'down-2', 'down-3'].map((item) => commits.submit(item, 1)))
    expect(failing.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect(failing.map((r) => (r as PromiseRejectedResult).reason.message)).toEqual(['failed: down-1', 'failed: down-2', 'failed: down-3'])
    await Promise.all(['e', 'f'].map((item) => commits.submit(item, 1)))
    expect(db.committed).toEqual(['e', 'f'])
  })

  it('retries a failed group item by item, so only the bad item fails', async () => {
    const db = fakeDatabase((items) => items.includes('bad'))
    const commits = groupCommit({ commit: db.commit, gatherTurn: true })
    const results = await Promise.allSettled(['a', 'bad', 'b'].map((item) => commits.submit(item, 1)))
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(db.commits).toEqual([['a', 'bad', 'b'], ['a'], ['bad'], ['b']])
    expect(db.committed).toEqual(['a', 'b'])
  })

  it('refuses a submission, holding nothing of it, while the weight waiting behind a commit would pass maxQueued', async () => {
    const db = fakeDatabase()
    const commits = groupCommit({ commit: db.commit, maxQueued: 10 })
    db.hold()
    // `a` is being committed and counts no more; `b` and `c` wait (6 + 4).
    const accepted = [commits.submit('a', 8), commits.submit('b', 6), commits.submit('c', 4)]
    await expect(commits.submit('d', 1)).rejects.toThrow('full')
    db.release()
    await nextTurn()
    db.release()
    await Promise.all(accepted)
    expect(db.committed).toEqual(['a', 'b', 'c'])
    await commits.submit('d', 1)
    expect(db.committed).toEqual(['a', 'b', 'c', 'd'])
  })

  it('takes an item heavier than maxQueued when nothing waits', async () => {
    const db = fakeDatabase()
    const commits = groupCommit({ commit: db.commit, maxQueued: 10 })
    await commits.submit('huge', 50)
    expect(db.committed).toEqual(['huge'])
  })

  it('fails a group and every item waiting behind it at once when the database cannot be reached, holding nothing, and commits again once it is back', async () => {
    let reachable = true
    const attempts: string[][] = []
    const commit = async (items: string[]) => {
      attempts.push(items)
      await nextTurn()
      if (!reachable) throw databaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
    }
    const commits = groupCommit({ commit, maxGroup: 2 })
    reachable = false
    // `a` is committed alone; `b`…`e` wait behind it and would form two more groups.
    const results = await Promise.allSettled(['a', 'b', 'c', 'd', 'e'].map((item) => commits.submit(item, 1)))
    expect(results.map((r) => r.status === 'rejected' && (r.reason as { code?: string }).code)).toEqual(Array(5).fill('service_unavailable'))
    // No item-by-item retry and no further group: one attempt for the whole outage.
    expect(attempts).toEqual([['a']])

    // Nothing is held: a full queue's worth is taken again once the database is back.
    reachable = true
    await Promise.all(['f', 'g', 'h'].map((item) => commits.submit(item, 1)))
    expect(attempts.slice(1).flat()).toEqual(['f', 'g', 'h'])
  })

  it('stops retrying a failed group item by item as soon as the database turns out to be unreachable', async () => {
    let reachable = true
    const attempts: string[][] = []
    const commit = async (items: string[]) => {
      attempts.push(items)
      if (items.includes('bad')) {
        reachable = false
        throw new Error('constraint violated')
      }
      if (!reachable) throw databaseUnavailable(new Error('Connection terminated unexpectedly'))
    }
    const commits = groupCommit({ commit, gatherTurn: true })
    const results = await Promise.allSettled(['bad', 'a', 'b'].map((item) => commits.submit(item, 1)))
    expect(results.map((r) => (r.status === 'rejected' ? ((r.reason as { code?: string }).code ?? 'other') : 'ok'))).toEqual(['other', 'service_unavailable', 'service_unavailable'])
    expect(attempts).toEqual([['bad', 'a', 'b'], ['bad'], ['a']])
  })
})
