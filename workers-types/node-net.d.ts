// What the Worker uses of node:net (workerd's nodejs_compat has it; contract/egress-policy.ts checks
// warehouses' URLs with it). @cloudflare/workers-types declares no node: modules, and @types/node must
// stay out of the Worker's program (test/unit/lint-rules.test.ts), so tsconfig.workers.json alone includes this.
declare module 'node:net' {
  export function isIP(input: string): 0 | 4 | 6
  export class BlockList {
    addSubnet(net: string, prefix: number, type?: 'ipv4' | 'ipv6'): void
    check(address: string, type?: 'ipv4' | 'ipv6'): boolean
  }
}
