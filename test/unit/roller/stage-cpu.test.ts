// roller/stage-cpu.ts: a stage's CPU is its own (what a stage inside it took is left out), a disabled
// one only calls through, and the codecs it wraps count their compressions.
import { describe, expect, it } from 'vitest'
import { StageCpu, threadCpuNs, UNMEASURED } from '../../../roller/stage-cpu.ts'

/** Burns `ms` of this thread's CPU (by its own clock: a busy box does not shorten it). */
function burn(ms: number): number {
  const until = threadCpuNs()! + ms * 1e6
  let x = 0
  while (threadCpuNs()! < until) for (let i = 0; i < 1000; i++) x += Math.sqrt(x + i)
  return x
}

const linux = threadCpuNs() !== null

describe.runIf(linux)('StageCpu', () => {
  it('reads a thread clock that moves with work', () => {
    const t0 = threadCpuNs()!
    burn(20)
    expect(threadCpuNs()! - t0).toBeGreaterThanOrEqual(20e6)
  })

  it('reads the clock up to date: work shorter than a scheduler tick shows at once', () => {
    // Without bringing it up to date, the file moved only when the scheduler looked (up to 4 ms
    // apart): a short stage read 0 and the next stage to wake a thread was charged for it.
    let moved = 0
    let last = threadCpuNs()!
    for (let n = 0; n < 200; n++) {
      let x = 0
      for (let i = 0; i < 20_000; i++) x += Math.sqrt(x + i)
      const now = threadCpuNs()! + (x < 0 ? 1 : 0)
      if (now > last) moved++
      last = now
    }
    expect(moved).toBeGreaterThanOrEqual(195)
  })

  it('charges nested stages to themselves, not to the stage around them', async () => {
    const cpu = new StageCpu(true)
    await cpu.around('commit', async () => {
      burn(20)
      cpu.run('encode', () => {
        burn(20)
        cpu.run('compress', () => burn(40))
      })
      await new Promise((r) => setTimeout(r, 5))
    })
    cpu.add('get', 7e6)
    const ms = cpu.ms()
    // Each its own 20 or 40 ms (plus the clock reads and the loop's last round), never its inner stage's.
    expect(ms.compress).toBeGreaterThanOrEqual(40)
    expect(ms.compress).toBeLessThan(55)
    expect(ms.encode).toBeGreaterThanOrEqual(20)
    expect(ms.encode).toBeLessThan(35)
    expect(ms.commit).toBeGreaterThanOrEqual(20)
    expect(ms.commit).toBeLessThan(35)
    expect(ms.get).toBe(7)
    expect(ms.scan).toBe(0)
    expect(ms.main_rest).toBeLessThan(10)
    expect(ms.main_rest).toBeGreaterThanOrEqual(0)
  })

  it('wraps one codec, or codecs made by level, so each compression counts', () => {
    const cpu = new StageCpu(true)
    const slow = (input: Uint8Array) => {
      burn(15)
      return input
    }
    const one = cpu.codecs({ codec: 'zstd' as const, compress: slow })
    const byLevel = cpu.codecs({ zstd: (_level: number) => ({ codec: 'zstd' as const, compress: slow }) })
    expect(one.codec).toBe('zstd')
    one.compress(new Uint8Array(1))
    byLevel.zstd(3).compress(new Uint8Array(1))
    expect(cpu.ms().compress).toBeGreaterThanOrEqual(30)
    expect(cpu.codecs('snappy')).toBe('snappy')
  })
})

describe('StageCpu when not asked for', () => {
  it('calls through and counts nothing', async () => {
    const codec = { codec: 'zstd' as const, compress: (i: Uint8Array) => i }
    expect(UNMEASURED.codecs(codec)).toBe(codec)
    expect(UNMEASURED.run('encode', () => 42)).toBe(42)
    expect(await UNMEASURED.around('commit', async () => 'done')).toBe('done')
    expect(UNMEASURED.ms()).toEqual({ get: 0, scan: 0, encode: 0, compress: 0, commit: 0, main_rest: 0 })
  })
})
