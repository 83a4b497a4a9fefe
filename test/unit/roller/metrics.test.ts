// The per-sink gauges (issue 15, defect 4): set from a view of every sink, 0 once nothing waits, and
// removed for a sink the view no longer lists. Read back as Prometheus serves them (/metrics).
import { describe, expect, it } from 'vitest'
import type { SinkLag } from '../../../contract/internal.ts'
import { RollerMetrics } from '../../../roller/metrics.ts'

const NOW = Date.UTC(2026, 8, 21, 12, 0, 0)

function sink(
  id: string,
  lag: { batches: number; oldestMsAgo?: number },
  opts: { state?: string; rollSeconds?: number; due?: boolean; leased?: boolean } = {},
): SinkLag {
  const oldest = lag.oldestMsAgo === undefined ? null : new Date(NOW - lag.oldestMsAgo).toISOString().replace('Z', '123Z')
  return {
    id,
    state: opts.state ?? 'active',
    roll_seconds: opts.rollSeconds ?? 300,
    batches: lag.batches,
    oldest_at: oldest,
    due: opts.due ?? false,
    leased: opts.leased ?? false,
  }
}

/** name{sink="…"} value, for every sample of the two per-sink gauges. */
async function samples(m: RollerMetrics): Promise<Record<string, number>> {
  const text = await m.registry.metrics()
  const out: Record<string, number> = {}
  for (const [, name, id, value] of text.matchAll(/^(lhbox_sink_lag_seconds|lhbox_sink_roll_seconds_policy)\{sink="([^"]+)"\} (\S+)$/gm)) {
    out[`${name}/${id}`] = Number(value)
  }
  return out
}

describe('RollerMetrics.setSinks', () => {
  it('sets lag from the oldest waiting batch, 0 when none waits, disabled sinks included', async () => {
    const m = new RollerMetrics()
    await m.setSinks(
      [
        sink('a', { batches: 2, oldestMsAgo: 90_000 }),
        sink('b', { batches: 0 }),
        sink('c', { batches: 1, oldestMsAgo: 5_000 }, { state: 'disabled', rollSeconds: 60 }),
      ],
      NOW,
    )
    expect(await samples(m)).toEqual({
      'lhbox_sink_lag_seconds/a': 90, // the microseconds of received_at below the millisecond do not count
      'lhbox_sink_lag_seconds/b': 0,
      'lhbox_sink_lag_seconds/c': 5,
      'lhbox_sink_roll_seconds_policy/a': 300,
      'lhbox_sink_roll_seconds_policy/b': 300,
      'lhbox_sink_roll_seconds_policy/c': 60,
    })
  })

  it('a drained sink reads 0; a sink gone from the view loses both series', async () => {
    const m = new RollerMetrics()
    await m.setSinks([sink('a', { batches: 1, oldestMsAgo: 1_000_000 }), sink('gone', { batches: 3, oldestMsAgo: 2_000_000 })], NOW)
    await m.setSinks([sink('a', { batches: 0 })], NOW)
    expect(await samples(m)).toEqual({ 'lhbox_sink_lag_seconds/a': 0, 'lhbox_sink_roll_seconds_policy/a': 300 })
  })

  it('never negative when the ledger’s clock is ahead', async () => {
    const m = new RollerMetrics()
    await m.setSinks([sink('a', { batches: 1, oldestMsAgo: -2_000 })], NOW)
    expect((await samples(m))['lhbox_sink_lag_seconds/a']).toBe(0)
  })
})

describe('lhbox_sinks_due', () => {
  it('counts the active sinks due that no roller holds', async () => {
    const m = new RollerMetrics()
    await m.setSinks(
      [
        sink('due', { batches: 1, oldestMsAgo: 400_000 }, { due: true }),
        sink('held', { batches: 1, oldestMsAgo: 400_000 }, { due: true, leased: true }),
        sink('disabled', { batches: 1, oldestMsAgo: 400_000 }, { due: true, state: 'disabled' }),
        sink('waiting', { batches: 1, oldestMsAgo: 1_000 }),
      ],
      NOW,
    )
    expect(await m.registry.metrics()).toMatch(/^lhbox_sinks_due 1$/m)
  })
})
