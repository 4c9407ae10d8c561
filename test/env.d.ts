declare module '*.sql?raw' {
  const text: string;
  export default text;
}

declare module '*.md?raw' {
  const text: string;
  export default text;
}
