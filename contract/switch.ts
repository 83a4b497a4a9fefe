// The switch for the whole feature, read alike by the edge and the roller: LHBOX_SINKS_ENABLED, or the
// earlier spec's AL_SINKS_ENABLED, set to false / 0 / off / no turns sinks off; unset or anything else, on.

export function sinksEnabled(env: { LHBOX_SINKS_ENABLED?: string; AL_SINKS_ENABLED?: string }): boolean {
  const flag = (env.LHBOX_SINKS_ENABLED ?? env.AL_SINKS_ENABLED ?? '').trim().toLowerCase()
  return !['false', '0', 'off', 'no'].includes(flag)
}
