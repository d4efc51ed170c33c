import Link from "next/link";

export default function NotFound() {
  return (
    <main className="flex min-h-full flex-col items-center justify-center gap-2 p-12 text-center">
      <p className="text-sm font-semibold text-indigo-600">404</p>
      <h1 className="text-2xl font-semibold">This page does not exist, or you may not see it.</h1>
      <p className="text-sm text-slate-600">Check the address, or ask an admin of the organization to add you.</p>
      <Link href="/" className="mt-4 text-sm font-medium text-indigo-600 hover:underline">
        Go to your organization
      </Link>
    </main>
  );
}
