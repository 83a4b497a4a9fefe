// The S3 endpoint's refusals (s3-proxy.ts) in S3's own error shape: engines' S3 clients read
// <Error><Code>…</Code><Message>…</Message></Error>, not the REST catalog's ErrorModel.

export class S3Refusal extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 500 | 501 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'S3Refusal'
  }
}

const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`)

/** The refusal as S3 answers it (no body to a HEAD, as S3). */
export function s3ErrorResponse(e: S3Refusal, method: string, resource: string): Response {
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${escapeXml(e.code)}</Code><Message>${escapeXml(e.message)}</Message><Resource>${escapeXml(resource)}</Resource></Error>`
  return new Response(method === 'HEAD' ? null : xml, { status: e.status, headers: { 'content-type': 'application/xml' } })
}
