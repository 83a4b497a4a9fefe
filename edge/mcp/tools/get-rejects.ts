// get_rejects: GET /v1/sinks/{sink}/rejects (read), the rows as the roller wrote them.
import * as v from 'valibot'
import { RejectsQuery, rejectsText, SINK_REF } from '../../routes/sinks.ts'
import { tool } from '../tool.ts'

export const getRejects = tool({
  name: 'get_rejects',
  description:
    'The rows of a sink the roller rejected, a page at a time: each with its batch_id, index, reason, field, expected, got, and the row as sent. Filter by reason or batch_id; pass next_cursor back as cursor.',
  input: v.object({ sink: SINK_REF, ...RejectsQuery.entries }),
  level: 'read',
  run: async (c, { sink, ...q }) => rejectsText(c, sink, q),
})
