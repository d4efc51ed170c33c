import type { ReactNode } from "react";
import { SettingsNav } from "@/components/settings/shared";

export default function SettingsLayout({ children }: { children: ReactNode }) {
  return (
    <>
      <SettingsNav />
      {children}
    </>
  );
}
