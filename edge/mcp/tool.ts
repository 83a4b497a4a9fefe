// One MCP tool: its input as a valibot schema (the one its route validates with; the JSON Schema
// clients see is made from it), who may call it, and what it answers: the route's answer as JSON text.
import type * as v from 'valibot'
import type { Context } from 'hono'
import type { AppEnv } from '../env.ts'
import type { Level } from '../keys.ts'
import type { Caller } from './caller.ts'

export interface Tool<S extends v.GenericSchema = v.GenericSchema> {
  name: string
  description: string
  input: S
  /** The API key level the tool needs, as its route does. */
  level: Level
  /** A send key may call it too (send_rows: for its own sink only). */
  sendKey?: true
  /** The answer as JSON text: rows go out as stored, never parsed and printed again. */
  run(c: Context<AppEnv>, input: v.InferOutput<S>, caller: Caller): Promise<string>
}

/** A tool, typed by its schema. */
export const tool = <S extends v.GenericSchema>(t: Tool<S>): Tool => t as unknown as Tool
