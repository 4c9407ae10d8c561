declare module '*.sql?raw' {
  const text: string;
  export default text;
}
declare namespace Cloudflare {
  interface Env extends import('../src/env').Env {}
}
