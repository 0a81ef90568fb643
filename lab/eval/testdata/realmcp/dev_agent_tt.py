# Agent queries for tasks of ../shared/train/tooltalk (first user turns
# with several tools) and ../shared/train/taubench (the 19 tasks of its
# tasks_dev split), written by hand from the task text alone (what an
# agent would ask find_tools for, implied look-ups included), before any
# ranking was looked at. Keyed by the task text's first 60 characters.
TOOLTALK = {
 "Set an alarm for tomorrow at 9 AM. Also a reminder to send an": ["set an alarm", "add a reminder"],
 "Can you change the location for my birthday party event on s": ["find an event in my calendar", "change an event's location", "look up a user's email address", "send an email"],
 "Can you add Erica (erica) and Steve (stevene) to the meeting ": ["find a meeting in the calendar", "add attendees to a calendar event"],
 "I need to schedule a team meeting with (jenny), (nickie), and": ["create a calendar event", "send a message to people"],
 "I need to cancel my Paris trip because of the strikes. Can yo": ["search calendar events", "delete a calendar event", "list my reminders", "delete a reminder"],
 "I couldn't finish my report on time. Can you delete my remind": ["list my reminders", "delete a reminder"],
 "ugh need to do a digital cleanup. Can you delete all the remi": ["list reminders", "delete a reminder"],
}
TAUBENCH = {
 "Your name is Omar Lopez and your email is omar.lopez1868@exam": ["find a customer by email", "get order details", "product details and variants", "exchange delivered items"],
 "Your name is Harper Moore and your email is harper.moore2816@": ["find a customer by email", "list a user's orders", "cancel an order and refund"],
 "Your name is Isabella Brown and your zip code is 80257. You a": ["find a customer by name and zip", "get order details", "return delivered items for a refund"],
 "Your name is Fatima Smith and your email is fatima.smith9435@": ["find a customer by email", "get order details", "return an item for a refund"],
 "Your name is Mohamed Khan and your zip code is 60651. You are": ["find a customer by name and zip", "get order details", "return items by mail for a refund"],
 "Your name is Raj Lee and your email, you have multiple email ": ["find a customer by email", "cancel an order"],
 "Your name is Liam Li and your email is liam.li2557@example.co": ["find a customer by email", "get order details", "return a delivered item"],
 "Your name is Olivia Ito and your zip code is 80218. You are r": ["find a customer by name and zip", "get order details", "customer's payment methods", "return all items of an order"],
 "Your name is Omar Silva and your zip code is 92107. You are m": ["find a customer by name and zip", "get order details", "product variants", "change items of a pending order"],
 "Your name is Ivan Santos and your email is ivan.santos3158@ex": ["find a customer by email", "get order details", "return items and refund"],
 "Your name is Aarav Davis and your email is aarav.davis1165@ex": ["find a customer by email", "list the customer's orders", "cancel an order"],
 "Your name is Aarav Sanchez and your email is aarav.sanchez546": ["find a customer by email", "get order details", "return items for store credit"],
 "Your name is James Kim and your zip code is 92199. You are re": ["find a customer by name and zip", "change the shipping address of an order", "product variants", "change items of a pending order"],
 "Your name is Emma Kovacs and your email is emma.kovacs6621@ex": ["find a customer by email", "unsubscribe from marketing emails", "cancel an order"],
 "Your name is Daiki Patel and your zip code is 94111. You are ": ["find a customer by name and zip", "get order details", "product variants", "exchange a delivered item"],
 "Your name is Raj Santos and your email is raj.santos4322@exam": ["find a customer by email", "get order details", "product variants", "exchange a delivered item"],
 "Your name is Fatima Anderson and your zip code is 32100. You ": ["find a customer by name and zip", "get order details", "product variants", "change items of a pending order"],
}
# Two tasks of Olivia Ito share the same 60-character prefix; they are
# keyed by a longer prefix here.
TAUBENCH_LONG = {
 "Your name is Olivia Ito and your zip code is 80218. You are outgoing": ["find a customer by name and zip code", "get order details", "cancel an order"],
 "Your name is Olivia Ito and your zip code is 80218. You are optimistic": ["find a customer by name and zip", "get order details", "change the payment method of an order", "product variants", "change items of a pending order"],
}
