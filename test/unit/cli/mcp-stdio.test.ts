// lhbox mcp's stdio lines (cli/mcp-stdio.ts): read without JSON.parse, so send_rows's rows go on to
// the edge with every number's digits as the agent wrote them.
import { describe, expect, it } from 'vitest'
import { readMessage } from '../../../cli/mcp-stdio.ts'

describe('lhbox mcp: a stdio line', () => {
  it('turns send_rows’s rows array into its lossless JSON text', () => {
    const line =
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_rows","arguments":{"sink":"s","rows":[{"x":9223372036854775807,"d":12345678901234567890.1234567890,"f":1.50}]}}}'
    const m = readMessage(line) as any
    expect(m.id).toBe(3)
    expect(m.params.arguments.rows).toBe('[{"x":9223372036854775807,"d":12345678901234567890.1234567890,"f":1.50}]')
  })

  it('leaves every other message and member as plain JSON', () => {
    expect(readMessage('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_rejects","arguments":{"sink":"s","rows":5}}}')).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_rejects', arguments: { sink: 's', rows: 5 } },
    })
    expect(readMessage('{"jsonrpc":"2.0","method":"notifications/initialized"}')).toEqual({ jsonrpc: '2.0', method: 'notifications/initialized' })
    expect(() => readMessage('{"jsonrpc":"2.0",')).toThrow()
  })
})
