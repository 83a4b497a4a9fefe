// What a write key may do from a sink's page, each after a confirmation: request a dedupe, change the
// roll policy, rotate the send key (the new one shown once, here) or retire the previous one, delete
// the sink. The client script sends each form to the API itself (PATCH, POST, DELETE /v1/sinks/{id}…)
// with the signed-in key; the API's rules decide, as for any caller.
import { RETIRE_DEFAULT_SECONDS, RETIRE_MAX_SECONDS } from '../../routes/send-keys.ts'
import { POLICY } from '../../sink-rules.ts'
import type { sinkView } from '../../sink-view.ts'

type SinkView = ReturnType<typeof sinkView>

export function SinkActions(props: { sink: SinkView }) {
  const s = props.sink
  return (
    <section id="actions">
      <h2>Actions</h2>
      <form data-action="PATCH" data-path={`/v1/sinks/${s.id}`} data-confirm={`Change the roll policy of ${s.name}?`} class="inline">
        <label>
          roll_seconds
          <input name="roll_seconds" type="number" min={POLICY.rollSeconds.min} max={POLICY.rollSeconds.max} value={String(s.roll.roll_seconds)} required />
        </label>
        <label>
          roll_bytes
          <input name="roll_bytes" type="number" min={POLICY.rollBytes.min} max={POLICY.rollBytes.max} value={String(s.roll.roll_bytes)} required />
        </label>
        <label>
          inactivity_seconds
          <input
            name="inactivity_seconds"
            type="number"
            min={POLICY.inactivitySeconds.min}
            max={POLICY.inactivitySeconds.max}
            value={s.roll.inactivity_seconds === null ? '' : String(s.roll.inactivity_seconds)}
            data-empty="null"
          />
        </label>
        <button type="submit">Change the roll policy</button>
      </form>
      {s.key ? (
        <form
          data-action="POST"
          data-path={`/v1/sinks/${s.id}/dedupe`}
          data-confirm={`Dedupe the whole table of ${s.name} on ${s.key.join(', ')}? It runs at the next roll.`}
        >
          <button type="submit">Request a dedupe</button>
        </form>
      ) : null}
      {s.kind === 'send' ? (
        <form
          data-action="POST"
          data-path={`/v1/sinks/${s.id}/send-keys`}
          data-confirm={`Rotate the send key of ${s.name}? The new key is shown once; the current one keeps working for the overlap.`}
          data-show-key="true"
          class="inline"
        >
          <label>
            retire_previous_after_seconds
            <input name="retire_previous_after_seconds" type="number" min="0" max={String(RETIRE_MAX_SECONDS)} placeholder={String(RETIRE_DEFAULT_SECONDS)} />
          </label>
          <button type="submit">Rotate the send key</button>
        </form>
      ) : null}
      {s.previous_send_key_retires_at ? (
        <form
          data-action="DELETE"
          data-path={`/v1/sinks/${s.id}/send-keys/previous`}
          data-confirm={`Retire the previous send key of ${s.name} now? Producers still sending with it get 401.`}
        >
          <p>The previous send key works until {s.previous_send_key_retires_at}.</p>
          <button type="submit" class="danger">
            Retire the previous key now
          </button>
        </form>
      ) : null}
      <div id="new-key" class="new-key" hidden />
      <form
        data-action="DELETE"
        data-path={`/v1/sinks/${s.id}`}
        data-confirm={`Delete ${s.name}? Its send key stops working at once; the table stays.`}
        data-then="#/"
      >
        <button type="submit" class="danger">
          Delete the sink
        </button>
      </form>
      <p class="status" id="action-status" role="status" />
    </section>
  )
}
