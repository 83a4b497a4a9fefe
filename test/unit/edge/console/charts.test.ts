// The console's inline SVG charts: scaled to their own maximum, every figure readable in a title,
// and nothing but markup (no inline style or script, which the console's CSP would refuse).
import { describe, expect, it } from 'vitest'
import { Bars, Sparkline } from '../../../../edge/console/charts.tsx'

describe('console charts', () => {
  it('a sparkline: one point per value, the largest at the top, zeros on the baseline', () => {
    const svg = String(Sparkline({ values: [0, 5, 10], label: 'rows', width: 100, height: 24 }))
    expect(svg).toContain('<polyline points="0.0,23.0 50.0,12.0 100.0,1.0"')
    expect(svg).toContain('<title>rows</title>')
    expect(svg).not.toMatch(/style=|<script/)
  })

  it('bars: one per non-zero value and series, each titled with its bin and figure', () => {
    const svg = String(
      Bars({
        label: 'rows and rejects',
        binLabels: ['10:00', '10:30', '11:00'],
        series: [
          { name: 'rows', kind: 'rows', values: [4, 0, 8] },
          { name: 'rejected', kind: 'rejects', values: [0, 1, 0] },
        ],
        width: 300,
        height: 100,
      }),
    )
    expect(svg.match(/<rect /g)).toHaveLength(3)
    expect(svg).toContain('<title>10:00: 4 rows</title>')
    expect(svg).toContain('<title>10:30: 1 rejected</title>')
    // The largest value is the full height.
    expect(svg).toMatch(/<rect class="rows" x="200.0" y="0.0" width="49.5" height="100.0">/)
    expect(svg).toContain('rows (max 8)')
    expect(svg).not.toMatch(/style=|<script/)
  })
})
