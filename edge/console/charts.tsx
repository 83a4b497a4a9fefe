// Small inline SVG charts: no library and no script, so they render in the server's HTML under the
// console's CSP (colours come from classes in console.css, not inline styles).

/** A line over values oldest to newest, scaled to its own maximum; a flat line for all zeros. */
export function Sparkline(props: { values: number[]; label: string; width?: number; height?: number }) {
  const { values, label } = props
  const w = props.width ?? 120
  const h = props.height ?? 24
  const max = Math.max(1, ...values)
  const step = values.length > 1 ? w / (values.length - 1) : w
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(h - 1 - (v / max) * (h - 2)).toFixed(1)}`).join(' ')
  return (
    <svg class="spark" viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-label={label}>
      <title>{label}</title>
      <polyline points={points} />
    </svg>
  )
}

export interface Series {
  name: string
  /** A class in console.css: rows, rejects, lag. */
  kind: string
  values: number[]
}

/**
 * Bars per bin, oldest to newest, one group per bin and one bar per series, scaled to the largest
 * value of all; each bar's title tells its figure, so a person can read it exactly.
 */
export function Bars(props: { series: Series[]; binLabels: string[]; label: string; width?: number; height?: number }) {
  const { series, binLabels, label } = props
  const w = props.width ?? 720
  const h = props.height ?? 120
  const bins = binLabels.length
  const max = Math.max(1, ...series.flatMap((s) => s.values))
  const groupWidth = w / Math.max(1, bins)
  const barWidth = Math.max(1, (groupWidth - 1) / Math.max(1, series.length))
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${w} ${h + 14}`} role="img" aria-label={label}>
        <title>{label}</title>
        <line class="axis" x1="0" y1={h} x2={w} y2={h} />
        {series.flatMap((s, si) =>
          s.values.map((v, i) =>
            v > 0 ? (
              <rect
                class={s.kind}
                x={(i * groupWidth + si * barWidth).toFixed(1)}
                y={(h - (v / max) * h).toFixed(1)}
                width={barWidth.toFixed(1)}
                height={((v / max) * h).toFixed(1)}
              >
                <title>{`${binLabels[i]}: ${v} ${s.name}`}</title>
              </rect>
            ) : null,
          ),
        )}
        <text class="tick" x="0" y={h + 12}>
          {binLabels[0]}
        </text>
        <text class="tick end" x={w} y={h + 12}>
          {binLabels[bins - 1]}
        </text>
      </svg>
      <figcaption>
        {series.map((s) => (
          <span class={`key ${s.kind}`}>
            {s.name} (max {Math.max(0, ...s.values)})
          </span>
        ))}
      </figcaption>
    </figure>
  )
}
