// list_sinks: GET /v1/sinks (read).
import { stringifyLossless } from '../../../iceberg/spec/json.ts'
import { ListSinksQuery, sinkList } from '../../routes/sinks.ts'
import { tool } from '../tool.ts'

export const listSinks = tool({
  name: 'list_sinks',
  description:
    'The project’s sinks (a page, by name): each sink’s id, table, state, roll policy, key, lag, what it received and its rejects. Pass next_cursor back as cursor for the next page.',
  input: ListSinksQuery,
  level: 'read',
  run: async (c, input) => stringifyLossless(await sinkList(c, input)), // a mapping's constants exact
})
