// The consumer Next.js app's root layout (App Router). Plain JSX: Next's TypeScript check needs TypeScript's
// JavaScript API, which the app's TypeScript 7 has not.
export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
