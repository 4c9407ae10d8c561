// The host side of the views browser test, bundled by esbuild and loaded by the harness page: hosts one view in
// a sandboxed iframe (srcdoc, scripts only, opaque origin: as strict as a real host's sandbox) through the
// ext-apps SDK's own AppBridge, sends it the tool input and result, and answers the view's tools/call through
// `hostCallTool`, which the test exposes from Node (a real MCP client against the local stack).
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

/** @typedef {import('@modelcontextprotocol/ext-apps/app-bridge').McpUiHostContext} HostContext */

/** @type {AppBridge} */
let bridge;
/** @type {HostContext} */
let context;

/** The view's tools/call, answered in Node by the test (Playwright's exposeFunction puts it on window). */
const hostCallTool = (name, args) => Reflect.get(window, 'hostCallTool')(name, args);

/**
 * @param {{ html: string, args: Record<string, unknown>, result: import('@modelcontextprotocol/client').CallToolResult, theme: 'light' | 'dark', locale: string }} opts
 */
async function mountView({ html, args, result, theme, locale }) {
  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.title = 'MCP App view';
  document.getElementById('host').replaceChildren(iframe);
  context = { theme, locale, displayMode: 'inline', platform: 'web', containerDimensions: { maxHeight: 10000 } };
  bridge = new AppBridge(null, { name: 'views-test-host', version: '1.0.0' }, { serverTools: {}, logging: {} }, { hostContext: context });
  bridge.oncalltool = (params) => hostCallTool(params.name, params.arguments ?? {});
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${Math.ceil(height)}px`;
  };
  const initialized = new Promise((/** @type {(v?: unknown) => void} */ resolve) => {
    bridge.oninitialized = resolve;
  });
  // Listen before the view loads: its App sends ui/initialize as soon as its script runs.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
}

/** @param {'light' | 'dark'} theme */
function setHostTheme(theme) {
  context = { ...context, theme };
  bridge.setHostContext(context);
}

// What the test calls with page.evaluate.
Object.assign(window, { mountView, setHostTheme });
