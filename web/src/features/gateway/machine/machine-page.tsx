export function MachinePage() {
  return <h1>MachinePage</h1>
}
