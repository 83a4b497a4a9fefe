// The device presets by name: a sink's device mapping may name one instead of spelling it out.
import type { Preset } from '../types.ts'
import { gpslogger } from './gpslogger.ts'
import { osmand } from './osmand.ts'
import { owntracks } from './owntracks.ts'
import { particle } from './particle.ts'
import { ttn } from './ttn.ts'

export const PRESETS: Record<string, Preset> = { owntracks, ttn, osmand, particle, gpslogger }
