// A V8 CPU profile of the Worker's isolate in workerd, through its inspector (startStack({ inspectorPort })), for the
// benches that find where a request's time goes: bench/mcp-overhead.mjs and bench/round-trips.mjs (`--profile`).
import WebSocket from 'ws';

/** A minimal Chrome DevTools Protocol session on workerd's inspector (the first bundle's isolate). */
export async function inspector(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let seq = 0;
  const pending = new Map();
  ws.on('message', (m) => {
    const msg = JSON.parse(m);
    pending.get(msg.id)?.(msg);
    pending.delete(msg.id);
  });
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++seq;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: 50 });
  return { send, close: () => ws.close() };
}

/** Self time per function (µs per call), most first. */
export function selfTimes(profile, calls) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const { functionName, lineNumber } = byId.get(profile.samples[i]).callFrame;
    if (functionName === '(idle)') continue;
    const us = profile.timeDeltas[i + 1] ?? 0;
    const key = `${functionName || '(anonymous)'}${lineNumber >= 0 ? `:${lineNumber + 1}` : ' (native)'}`;
    self.set(key, (self.get(key) ?? 0) + us);
    total += us;
  }
  return {
    totalMs: total / 1000 / calls,
    top: [...self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([k, v]) => [k, v / calls]),
  };
}
