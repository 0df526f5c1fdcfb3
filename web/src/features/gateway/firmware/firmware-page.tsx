export function FirmwarePage() {
  return <h1>FirmwarePage</h1>
}
